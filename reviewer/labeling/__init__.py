"""Human labeling: the rubric, label import/export (the label store itself is reviewer.store.labels)."""
