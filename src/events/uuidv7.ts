import { randomFillSync } from 'node:crypto';

/**
 * UUID version 7 (RFC 9562): 48 bits of Unix time in milliseconds, then a 12-bit counter (`rand_a`,
 * method 1 of section 6.2), then 62 random bits. Ids made by one process are strictly increasing:
 * within one millisecond the counter counts up from a random start below 2^11; when it runs out, or
 * when the clock steps back, the timestamp is advanced by one millisecond instead of going backwards.
 * Ids therefore sort by creation time, which the event stream's `Last-Event-ID` replay relies on.
 */
const SLICE = 16;
const POOL_SIZE = 256 * SLICE;
const pool = Buffer.alloc(POOL_SIZE);
let poolOffset = POOL_SIZE;

let lastMs = -1;
let counter = 0;

/** 16 fresh random bytes, taken from a pool refilled by the CSPRNG 256 ids at a time. */
function randomSlice(): Buffer {
  if (poolOffset + SLICE > POOL_SIZE) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const bytes = pool.subarray(poolOffset, poolOffset + SLICE);
  poolOffset += SLICE;
  return bytes;
}

const HEX: string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/** A new UUIDv7 in the canonical lowercase form. `now` is only for tests. */
export function uuidv7(now: number = Date.now()): string {
  const random = randomSlice();
  if (now > lastMs) {
    lastMs = now;
    counter = ((random[0] << 8) | random[1]) & 0x7ff; // start in the lower half: room to count up
  } else {
    counter += 1;
    if (counter > 0xfff) {
      lastMs += 1;
      counter = ((random[0] << 8) | random[1]) & 0x7ff;
    }
  }
  const ms = lastMs;
  const bytes = new Uint8Array(16);
  // 48-bit big-endian milliseconds (beyond 2^32, so no bitwise ops on the whole number).
  const high = Math.floor(ms / 2 ** 32);
  const low = ms >>> 0;
  bytes[0] = (high >>> 8) & 0xff;
  bytes[1] = high & 0xff;
  bytes[2] = (low >>> 24) & 0xff;
  bytes[3] = (low >>> 16) & 0xff;
  bytes[4] = (low >>> 8) & 0xff;
  bytes[5] = low & 0xff;
  bytes[6] = 0x70 | (counter >>> 8);
  bytes[7] = counter & 0xff;
  bytes[8] = 0x80 | (random[2] & 0x3f); // variant 10
  for (let i = 9; i < 16; i++) bytes[i] = random[i - 6];
  let hex = '';
  for (let i = 0; i < 16; i++) {
    hex += HEX[bytes[i]];
    if (i === 3 || i === 5 || i === 7 || i === 9) hex += '-';
  }
  return hex;
}

/** The Unix time in milliseconds a UUIDv7 carries. */
export function uuidv7Time(id: string): number {
  return parseInt(id.replace(/-/g, '').slice(0, 12), 16);
}

export const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
