// Seeded random streams keyed by (seed, tensor name), so an initialisation never depends on the
// order tensors are created in (docs/numerics.md#determinism-and-seeds). xoshiro128** seeded through splitmix32.

import { fnv1a, splitmix32 } from "../../random/seeds.ts";

export class RandomStream {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number, key: string) {
    // Fold the whole (possibly > 2^32) integer seed in, then the key.
    const lo = seed >>> 0;
    const hi = Math.floor(seed / 4294967296) >>> 0;
    const state = { s: fnv1a(key, fnv1a(`${lo}:${hi}`)) };
    this.a = splitmix32(state);
    this.b = splitmix32(state);
    this.c = splitmix32(state);
    this.d = splitmix32(state);
  }

  nextUint32(): number {
    const result = Math.imul(rotl(Math.imul(this.b, 5), 7), 9) >>> 0;
    const t = this.b << 9;
    this.c ^= this.a;
    this.d ^= this.b;
    this.b ^= this.c;
    this.a ^= this.d;
    this.c ^= t;
    this.d = rotl(this.d, 11);
    return result;
  }

  /** Uniform in [0, 1) with 32 random bits. */
  uniform(): number {
    return this.nextUint32() / 4294967296;
  }

  /** out[i] = lo + (hi - lo) * uniform. */
  fillUniform(out: Float32Array | Float64Array, lo: number, hi: number): void {
    const span = (hi - lo) / 4294967296;
    for (let i = 0; i < out.length; i++) out[i] = lo + span * this.nextUint32();
  }

  /** out[i] ~ N(0, std²), Box–Muller in pairs. */
  fillNormal(out: Float32Array | Float64Array, std: number): void {
    const n = out.length;
    const twoPi = 2 * Math.PI;
    for (let i = 0; i < n; i += 2) {
      const u1 = 1 - this.nextUint32() / 4294967296;
      const u2 = this.nextUint32() / 4294967296;
      const r = std * Math.sqrt(-2 * Math.log(u1));
      out[i] = r * Math.cos(twoPi * u2);
      if (i + 1 < n) out[i + 1] = r * Math.sin(twoPi * u2);
    }
  }
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}
