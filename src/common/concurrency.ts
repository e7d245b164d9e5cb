/**
 * At most `limit` calls of `run` at a time; the others wait in arrival order. For work whose cost is
 * large and bounded elsewhere anyway (the database's cores), so that waiting costs neither a pooled
 * connection nor memory for a result.
 */
export class ConcurrencyLimit {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(readonly limit: number) {}

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active += 1;
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.active -= 1;
    }
  }
}
