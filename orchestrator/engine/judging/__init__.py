"""The model judge (comparator kind judge): its calls and judge.jsonl."""
