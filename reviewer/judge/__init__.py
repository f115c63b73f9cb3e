"""The LLM judge: prompts, the Anthropic client wrapper, the runner (concurrency, cache, cost cap,
Message Batches) and position bias."""
