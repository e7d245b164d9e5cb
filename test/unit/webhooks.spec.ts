import fc from 'fast-check';
import { isPublicAddress, urlProblem } from '../../src/webhooks/address-policy';
import { nextAttemptAt, retryDelayMs } from '../../src/webhooks/backoff';
import { SecretBox } from '../../src/webhooks/secret-box';
import { checkedLookup } from '../../src/webhooks/webhook-sender';

describe('webhook addresses', () => {
  it.each([
    '127.0.0.1', '127.255.0.9', '10.0.0.1', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '169.254.0.1',
    '100.64.0.1', '100.127.255.254', '0.0.0.0', '224.0.0.1', '255.255.255.255', '192.0.2.1', '198.18.0.1',
    '::1', '::', 'fe80::1', 'fe80::1%eth0', 'fc00::1', 'fd00:ec2::254', 'ff02::1', '::ffff:127.0.0.1', '::ffff:169.254.169.254',
    '::ffff:a9fe:a9fe', '::ffff:10.0.0.1', '64:ff9b::7f00:1', '2002:7f00:1::', '2001:db8::1', '[::1]', 'localhost', 'not an address', '',
  ])('refuses %s', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each(['93.184.215.14', '8.8.8.8', '1.1.1.1', '100.63.255.255', '100.128.0.1', '172.32.0.1', '2606:4700::1111', '2a00:1450:4001:80b::200e', '::ffff:8.8.8.8'])(
    'accepts %s',
    (address) => {
      expect(isPublicAddress(address)).toBe(true);
    },
  );

  it('judges an IPv4-mapped IPv6 address as its IPv4 address, for every IPv4 address', () => {
    fc.assert(
      fc.property(fc.ipV4(), (v4) => {
        expect(isPublicAddress(`::ffff:${v4}`)).toBe(isPublicAddress(v4));
      }),
    );
  });

  it('never accepts an address inside 10/8, 127/8, 169.254/16, 100.64/10 or 192.168/16', () => {
    const octet = fc.integer({ min: 0, max: 255 });
    fc.assert(
      fc.property(octet, octet, octet, fc.integer({ min: 64, max: 127 }), (a, b, c, cgnat) => {
        for (const address of [`10.${a}.${b}.${c}`, `127.${a}.${b}.${c}`, `169.254.${b}.${c}`, `100.${cgnat}.${b}.${c}`, `192.168.${b}.${c}`]) {
          expect(isPublicAddress(address)).toBe(false);
        }
      }),
    );
  });

  it('never throws, whatever the text', () => {
    fc.assert(fc.property(fc.string(), (text) => typeof isPublicAddress(text) === 'boolean'));
  });

  it('wants https without credentials, unless private receivers are allowed (then http too)', () => {
    expect(urlProblem('https://hooks.example.com/x', false)).toBeUndefined();
    expect(urlProblem('http://hooks.example.com/x', false)).toBe('url must use https');
    expect(urlProblem('http://127.0.0.1:9/x', true)).toBeUndefined();
    expect(urlProblem('ftp://hooks.example.com/x', true)).toBe('url must use https');
    expect(urlProblem('https://a:b@hooks.example.com/', false)).toBe('url must not contain credentials');
    expect(urlProblem('/relative', false)).toBe('url must be an absolute URL');
  });

  it('refuses at connect time a name that resolves to a private address (DNS rebinding)', async () => {
    const answers: Record<string, { address: string; family: number }[]> = {
      'public.test': [{ address: '93.184.215.14', family: 4 }],
      'rebound.test': [{ address: '93.184.215.14', family: 4 }, { address: '127.0.0.1', family: 4 }],
    };
    const resolve = ((host: string, _options: unknown, callback: (error: Error | null, addresses: { address: string; family: number }[]) => void) =>
      callback(null, answers[host])) as never;
    const lookup = checkedLookup(false, resolve);
    const run = (host: string, all: boolean) =>
      new Promise<unknown>((done, fail) => lookup(host, { all }, (error, address) => (error ? fail(error) : done(address))));
    await expect(run('public.test', false)).resolves.toBe('93.184.215.14');
    await expect(run('public.test', true)).resolves.toEqual(answers['public.test']);
    await expect(run('rebound.test', true)).rejects.toThrow(/127\.0\.0\.1, which is not a public address/);
    await expect(new Promise((done) => checkedLookup(true, resolve)('rebound.test', { all: true }, (_e, address) => done(address)))).resolves.toEqual(answers['rebound.test']);
  });
});

describe('webhook retries', () => {
  const policy = { baseMs: 5_000, maxDelayMs: 3_600_000, windowMs: 86_400_000 };

  it('doubles each step, keeps each delay in the upper half of its step, and caps it', () => {
    expect(retryDelayMs(1, policy, () => 0)).toBe(2_500);
    expect(retryDelayMs(1, policy, () => 1)).toBe(5_000);
    expect(retryDelayMs(2, policy, () => 0)).toBe(5_000);
    expect(retryDelayMs(4, policy, () => 1)).toBe(40_000);
    expect(retryDelayMs(20, policy, () => 1)).toBe(3_600_000);
    expect(retryDelayMs(10_000, policy, () => 0.5)).toBe(2_700_000);
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10_000 }), fc.double({ min: 0, max: 1, noNaN: true }), (attempt, random) => {
        const step = Math.min(policy.maxDelayMs, policy.baseMs * 2 ** Math.min(attempt - 1, 52));
        const delay = retryDelayMs(attempt, policy, () => random);
        return delay >= Math.floor(step / 2) && delay <= step;
      }),
    );
  });

  it('stops once the next attempt would fall past the window: about 40 attempts over 24 hours by default', () => {
    const queued = 0;
    let now = queued;
    let attempt = 1;
    for (;;) {
      const at = nextAttemptAt(queued, now, attempt, policy, () => 0.5);
      if (at === null) break;
      now = at;
      attempt += 1;
    }
    expect(now).toBeLessThanOrEqual(policy.windowMs);
    expect(attempt).toBeGreaterThan(35);
    expect(attempt).toBeLessThan(45);
  });
});

describe('webhook secrets at rest', () => {
  it('opens what it sealed, only with the same key and the same webhook id', () => {
    const box = SecretBox.fromText('a configured key of at least 32 characters');
    const sealed = box.seal('whsec_abc', 'webhook-1');
    expect(sealed.toString('utf8')).not.toContain('whsec_abc');
    expect(box.open(sealed, 'webhook-1')).toBe('whsec_abc');
    expect(() => box.open(sealed, 'webhook-2')).toThrow();
    expect(() => SecretBox.fromText('another configured key of 32 characters').open(sealed, 'webhook-1')).toThrow();
    expect(box.seal('whsec_abc', 'webhook-1').equals(sealed)).toBe(false);
  });
});

describe('webhook sender', () => {
  it('loads its HTTP client with the first delivery, not before (a replica without webhooks never holds it)', async () => {
    let loaded = 0;
    jest.doMock('undici', () => {
      loaded++;
      return jest.requireActual('undici');
    });
    const { createServer } = await import('node:http');
    const receiver = createServer((_request, response) => response.writeHead(204).end());
    await new Promise<void>((listening) => receiver.listen(0, '127.0.0.1', listening));
    try {
      let sender!: typeof import('../../src/webhooks/webhook-sender').WebhookSender;
      jest.isolateModules(() => ({ WebhookSender: sender } = jest.requireActual('../../src/webhooks/webhook-sender')));
      const refusing = new sender({ timeoutMs: 1000, allowPrivate: false, connections: 1 });
      // A private address literal is refused before any connection: still nothing loaded; closing an unused sender works.
      expect((await refusing.send('https://127.0.0.1/hook', {}, '{}')).error).toMatch(/not a public address/);
      await refusing.close();
      expect(loaded).toBe(0);
      const delivering = new sender({ timeoutMs: 1000, allowPrivate: true, connections: 1 });
      const { port } = receiver.address() as { port: number };
      expect((await delivering.send(`http://127.0.0.1:${port}/hook`, {}, '{}')).statusCode).toBe(204);
      expect((await delivering.send(`http://127.0.0.1:${port}/hook`, {}, '{}')).statusCode).toBe(204);
      expect(loaded).toBe(1);
      await delivering.close();
    } finally {
      receiver.close();
      jest.dontMock('undici');
    }
  });
});
