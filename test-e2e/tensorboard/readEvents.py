# Reads a run's TensorBoard folder with TensorBoard's own EventAccumulator and prints every scalar
# series as JSON: {"tags": {tag: [[step, value], ...]}}.
import json
import sys

from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

request = json.load(sys.stdin)
acc = EventAccumulator(request["dir"], size_guidance={"scalars": 0})
acc.Reload()
tags = {tag: [[e.step, e.value] for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]}
print(json.dumps({"tags": tags}))
