// The checkpoint manager: a record only for a save whose every part exists, the part that did
// save removed again, TTLs by kind, and a superseded rolling point deleted once a newer record exists.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readCheckpoints } from "../../src/runs/checkpoints.ts";
import type { RestClient, TinkerFuture, TrainingClient } from "../../src/tinker/clients.ts";
import type { SaveWeightsResponse } from "../../src/tinker/types.ts";
import { CheckpointManager } from "../../src/training/checkpoints.ts";

const future = (value: Promise<SaveWeightsResponse>): TinkerFuture<SaveWeightsResponse> => ({ result: () => value }) as TinkerFuture<SaveWeightsResponse>;

function fakes(options: { failSampler?: boolean } = {}) {
  const saves: { kind: string; name: string; ttl?: number }[] = [];
  const deleted: string[] = [];
  const training = {
    async saveState(name: string, o: { ttlSeconds?: number } = {}) {
      saves.push({ kind: "state", name, ttl: o.ttlSeconds });
      return future(Promise.resolve({ path: `tinker://r/weights/${name}` }));
    },
    async saveWeightsForSampler(name: string, o: { ttlSeconds?: number } = {}) {
      saves.push({ kind: "sampler", name, ttl: o.ttlSeconds });
      return future(options.failSampler ? Promise.reject(new Error("disk full")) : Promise.resolve({ path: `tinker://r/sampler_weights/${name}` }));
    },
  } as unknown as TrainingClient;
  const rest = {
    async deleteCheckpointFromTinkerPath(path: string) {
      deleted.push(path);
    },
  } as unknown as RestClient;
  return { training, rest, saves, deleted };
}

const policy = { save_every: 2, ttl_seconds: 100, rolling_save_every: 1, rolling_ttl_seconds: 10 };

test("a save with a failed part is not recorded, and the part that saved is deleted", async () => {
  const dir = mkdtempSync(join(tmpdir(), "ckpt-"));
  try {
    const f = fakes({ failSampler: true });
    const manager = new CheckpointManager(f.training, policy, { logDir: dir, restClient: f.rest });
    await assert.rejects(manager.save(4, { batch: 4 }), /^Error: disk full$/);
    assert.equal(existsSync(join(dir, "checkpoints.jsonl")), false);
    assert.deepEqual(f.deleted, ["tinker://r/weights/000004"]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("periodic, rolling and final saves: cadence, TTLs, records, and superseded rolling points deleted", async () => {
  const dir = mkdtempSync(join(tmpdir(), "ckpt-"));
  try {
    const f = fakes();
    const manager = new CheckpointManager(f.training, policy, { logDir: dir, restClient: f.rest });
    assert.deepEqual(
      [0, 1, 2, 3, 4].map((s) => manager.isPeriodic(s)),
      [false, false, true, false, true],
    );
    assert.deepEqual(
      [0, 1, 2, 3].map((s) => manager.isRolling(s)),
      [false, true, false, true],
    );
    await manager.saveRolling(1, { batch: 1 });
    await manager.save(2, { batch: 2 });
    await manager.saveFinal({ batch: 3 });
    assert.deepEqual(
      readCheckpoints(dir).map((r) => [r.name, r.batch, r.rolling ?? false, r.final ?? false, r.sampler_path !== undefined]),
      [
        ["000001", 1, true, false, false],
        ["000002", 2, false, false, true],
        ["final", 3, false, true, true],
      ],
    );
    assert.deepEqual(
      f.saves.map((s) => `${s.kind}:${s.name}:${s.ttl ?? "none"}`),
      ["state:000001:10", "state:000002:100", "sampler:000002:100", "state:final:none", "sampler:final:none"],
    );
    assert.deepEqual(f.deleted, ["tinker://r/weights/000001"], "the rolling point goes once a newer record exists");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
