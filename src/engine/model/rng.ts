// Seeded random streams keyed by (seed, tensor name), so an initialisation never depends on the
// order tensors are created in (docs/numerics.md#determinism-and-seeds). xoshiro128** seeded through splitmix32.

function hashString(s: string, h: number): number {
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

function splitmix32(state: { s: number }): number {
  state.s = (state.s + 0x9e3779b9) | 0;
  let z = state.s;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  return (z ^ (z >>> 16)) >>> 0;
}

export class RandomStream {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number, key: string) {
    // Fold the whole (possibly > 2^32) integer seed in, then the key.
    const lo = seed >>> 0;
    const hi = Math.floor(seed / 4294967296) >>> 0;
    const state = { s: hashString(key, hashString(`${lo}:${hi}`, 0x811c9dc5)) };
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
