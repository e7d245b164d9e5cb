import { randomUUID } from 'node:crypto';
import { TOKEN_PREFIX } from '../auth/tokens.js';

/** Longest client-sent request id kept; a longer one is replaced (it would bloat every log line). */
export const REQUEST_ID_MAX_LENGTH = 128;
/** Visible ASCII only: no spaces, control characters or line breaks that could forge log lines or headers. */
const SANE_REQUEST_ID = new RegExp(`^[\\x21-\\x7e]{1,${REQUEST_ID_MAX_LENGTH}}$`);

/**
 * The request's id: the client's `X-Request-Id` when it is a sane value (so a proxy's or a mobile
 * app's id follows the request into these logs), a new UUID otherwise. Tokens are not sane ids:
 * an id is logged and echoed, so one shaped like an access token is replaced too.
 */
export function requestIdFrom(header: string | string[] | undefined): string {
  if (typeof header === 'string' && SANE_REQUEST_ID.test(header) && !header.startsWith(TOKEN_PREFIX)) return header;
  return randomUUID();
}
