// A clock for waits with backoff: sleeping only moves time on, and every sleep is recorded.
export interface FakeTime {
  sleep: (ms: number) => Promise<void>;
  now: () => number;
  slept: number[];
}

export function fakeTime(): FakeTime {
  let t = 0;
  const slept: number[] = [];
  return {
    slept,
    now: () => t,
    sleep: async (ms) => {
      slept.push(ms);
      t += ms;
    },
  };
}
