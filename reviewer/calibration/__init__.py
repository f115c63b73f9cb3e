"""Judge calibration: agreement between a judge and humans, and between humans."""
