"""What summaries keep, measured on real transcripts (`make bench-quality`).

bench/ measures speed and cost; this package measures content: a mechanical ground truth read
from each raw transcript (real_facts.py, next_step.py), never from the summarizer's own code,
and the share of it a summary still holds (quality.py).
"""
