#!/bin/bash
# Named rewards in reward.json: "reward" is 1 when /app/sum.txt holds the sum, "exists" says
# whether the file was written at all.
python3 - <<'PY'
import json, pathlib
expected = sum(int(line) for line in open("/tests/numbers.txt") if line.strip())
answer = pathlib.Path("/app/sum.txt")
exists = answer.is_file()
right = exists and answer.read_text().strip() == str(expected)
with open("/logs/verifier/reward.json", "w") as out:
    json.dump({"reward": 1.0 if right else 0.0, "exists": 1.0 if exists else 0.0}, out)
PY
