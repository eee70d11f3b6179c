// Fair shares of the engine between sessions. Every piece of engine work (a model's next queued
// request, a sample request) is handed to the engine through here with its cost in tokens. Work
// is dispatched round-robin across sessions while the tokens in flight stay within a budget, so a
// session that floods the server with big requests gets one turn in each round like any other,
// and a small request of another session waits for at most the budget's worth of work — not for
// every request queued before it. A single job above the budget still runs, alone.
// Order: among sessions with waiting work, the one whose last turn is oldest goes next.

interface Job {
  cost: number;
  start: () => void;
}

export class FairScheduler {
  private readonly queues = new Map<string, Job[]>();
  /** When each session last had a turn: the waiting session whose turn is oldest goes next. */
  private readonly lastTurn = new Map<string, number>();
  private turns = 0;
  private inflightCost = 0;
  private inflightJobs = 0;

  constructor(private readonly budget: number) {}

  /** Runs `task` when it is `key`'s turn; resolves or rejects with it. */
  run<T>(key: string, cost: number, task: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const job: Job = {
        cost: Math.max(1, cost),
        start: () => {
          let p: Promise<T>;
          try {
            p = task();
          } catch (err) {
            p = Promise.reject(err);
          }
          p.then(resolve, reject).finally(() => {
            this.inflightCost -= job.cost;
            this.inflightJobs--;
            this.pump();
          });
        },
      };
      const q = this.queues.get(key);
      if (q === undefined) this.queues.set(key, [job]);
      else q.push(job);
      this.pump();
    });
  }

  /** Jobs waiting for their turn. */
  get waiting(): number {
    let n = 0;
    for (const q of this.queues.values()) n += q.length;
    return n;
  }

  private pump(): void {
    for (;;) {
      let key: string | undefined;
      let oldest = Infinity;
      for (const k of this.queues.keys()) {
        const t = this.lastTurn.get(k) ?? -1;
        if (t < oldest) {
          oldest = t;
          key = k;
        }
      }
      if (key === undefined) return;
      const q = this.queues.get(key)!;
      const job = q[0]!;
      if (this.inflightJobs > 0 && this.inflightCost + job.cost > this.budget) return;
      q.shift();
      if (q.length === 0) this.queues.delete(key);
      this.lastTurn.set(key, this.turns++);
      if (this.lastTurn.size > 10_000) for (const k of this.lastTurn.keys()) if (!this.queues.has(k)) this.lastTurn.delete(k);
      this.inflightCost += job.cost;
      this.inflightJobs++;
      job.start();
    }
  }
}
