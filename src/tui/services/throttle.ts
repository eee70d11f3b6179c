// Coalesces a stream of values into at most one delivery per interval: the first value goes out
// at once, later ones within the interval are held and only the newest is delivered when it ends.
// The dashboard uses it so a fast-appending run costs a bounded number of Ink frames (each frame
// re-measures and re-tokenises every chart line, whatever changed).
export class Throttle<T> {
  private last = -Infinity;
  private pending: { value: T } | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly minMs: number,
    private readonly deliver: (value: T) => void,
    private readonly now: () => number = () => performance.now(),
  ) {}

  push(value: T): void {
    this.pending = { value };
    if (this.timer) return;
    const wait = this.last + this.minMs - this.now();
    if (wait <= 0) this.flush();
    else {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.flush();
      }, wait);
      this.timer.unref?.();
    }
  }

  private flush(): void {
    const p = this.pending;
    if (!p) return;
    this.pending = undefined;
    this.last = this.now();
    this.deliver(p.value);
  }

  /** Drops a held value (on unmount). */
  cancel(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.pending = undefined;
  }
}
