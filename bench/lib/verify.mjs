// `node bench/run.mjs --verify`: every scenario once on the service and once on the raw server, and the
// answers compared as documents — status, the headers that matter (content-type, vary, location with
// its id normalised) and the parsed body. Values written per request (new ids, timestamps of what was
// just written) are compared by format only; everything else exactly. Both servers get the same Host,
// so absolute links compare equal. Writes get a fresh request each (the same embark pair on both, with
// the embarks reset in between).
import { request as httpRequest } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { connect, resetEmbarks } from './load.mjs';
import { RAW_PORT, SERVICE_PORT } from './servers.mjs';

const HOST = 'twin.bench.test:8080';
const FORMATS = {
  uuid: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
  timestamp: /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/,
};
const UUIDS = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

/** One request with an explicit Host (fetch cannot set it). */
export function send(port, { method = 'GET', path, headers = {}, body }) {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers: { ...headers, host: HOST } }, (res) => {
      const chunks = [];
      res.on('data', (chunk) => chunks.push(chunk));
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        const coding = res.headers['content-encoding'];
        const decoded = coding === 'br' ? brotliDecompressSync(body) : coding === 'gzip' ? gunzipSync(body) : body;
        resolve({ status: res.statusCode, headers: res.headers, text: decoded.toString('utf8') });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * A GET answered 503 with Retry-After is asked again once after it, as a client would: a cold page of the
 * million twins can outlast the service's statement timeout on a machine whose page cache does not hold
 * the data, and the server asked first pays for the cold pages the other then finds warm.
 */
async function sendAsClient(port, request, who, name, log) {
  const answer = await send(port, request);
  if (answer.status !== 503 || (request.method ?? 'GET') !== 'GET' || answer.headers['retry-after'] === undefined) return answer;
  log(`verify: ${name}: the ${who} answered 503 (${answer.text.slice(0, 120)}); asked again after Retry-After`);
  await new Promise((resolve) => setTimeout(resolve, Number(answer.headers['retry-after']) * 1000 || 1000));
  return send(port, request);
}

const show = (value) => {
  const text = JSON.stringify(value);
  return text === undefined ? 'undefined' : text.length > 120 ? `${text.slice(0, 117)}...` : text;
};

/** Differences between two parsed documents, as `path: service … raw …` lines. */
function diff(service, raw, generated, path = '', out = []) {
  if (out.length >= 20) return out;
  const format = generated[path];
  if (format) {
    if (!(typeof service === 'string' && FORMATS[format].test(service) && typeof raw === 'string' && FORMATS[format].test(raw))) {
      out.push(`${path || '/'}: expected a ${format} from both, service ${show(service)} vs raw ${show(raw)}`);
    }
    return out;
  }
  if (Array.isArray(service) && Array.isArray(raw)) {
    if (service.length !== raw.length) out.push(`${path || '/'}: array length, service ${service.length} vs raw ${raw.length}`);
    for (let i = 0; i < Math.min(service.length, raw.length); i++) diff(service[i], raw[i], generated, `${path}/${i}`, out);
    return out;
  }
  const isObject = (v) => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (isObject(service) && isObject(raw)) {
    for (const key of new Set([...Object.keys(service), ...Object.keys(raw)])) {
      if (!(key in raw)) out.push(`${path}/${key}: only in the service's answer (${show(service[key])})`);
      else if (!(key in service)) out.push(`${path}/${key}: only in the raw answer (${show(raw[key])})`);
      else diff(service[key], raw[key], generated, `${path}/${key}`, out);
    }
    return out;
  }
  if (service !== raw) out.push(`${path || '/'}: service ${show(service)} vs raw ${show(raw)}`);
  return out;
}

function compareAnswers(scenario, service, raw) {
  const problems = [];
  if (service.status !== raw.status) problems.push(`status: service ${service.status} vs raw ${raw.status}`);
  for (const name of ['content-type', 'vary', 'location', 'content-encoding']) {
    const normal = (value) => value?.replace(UUIDS, '<id>');
    if (normal(service.headers[name]) !== normal(raw.headers[name])) problems.push(`header ${name}: service ${show(service.headers[name])} vs raw ${show(raw.headers[name])}`);
  }
  // A 304 has no body: its status and headers are the answer.
  if (service.status === 304 && raw.status === 304) {
    if (service.text !== '' || raw.text !== '') problems.push(`a 304 with a body: service ${show(service.text)} vs raw ${show(raw.text)}`);
    if (service.headers.etag !== raw.headers.etag) problems.push(`header etag: service ${show(service.headers.etag)} vs raw ${show(raw.headers.etag)}`);
    return problems;
  }
  let documents;
  try {
    documents = [JSON.parse(service.text), JSON.parse(raw.text)];
  } catch (error) {
    problems.push(`body is not JSON (${error.message}): service ${show(service.text)} vs raw ${show(raw.text)}`);
    return problems;
  }
  if (service.status >= 400) problems.push(`the service answered ${service.status}: ${show(documents[0])}`);
  problems.push(...diff(documents[0], documents[1], scenario.generated ?? {}));
  return problems;
}

/** Checks every scenario; resolves with the number of scenarios whose answers differ (each printed). */
export async function verify(list, data, log, ports = { service: SERVICE_PORT, raw: RAW_PORT }) {
  const db = await connect(data.url);
  let failed = 0;
  try {
    for (const scenario of list) {
      let request = { method: scenario.method, path: scenario.path, headers: scenario.headers, body: scenario.body };
      if (scenario.pairs) {
        await resetEmbarks(db, data.embarkQuests);
        scenario.pairs.restart();
        request = { ...request, ...scenario.pairs.next() };
      }
      const service = await sendAsClient(ports.service, request, 'service', scenario.name, log);
      if (scenario.pairs) await resetEmbarks(db, data.embarkQuests);
      const raw = await sendAsClient(ports.raw, request, 'raw server', scenario.name, log);
      const problems = compareAnswers(scenario, service, raw);
      if (problems.length === 0) {
        log(`verify: ${scenario.name}: same document (${service.status}, ${service.text.length} bytes)`);
      } else {
        failed++;
        log(`verify: ${scenario.name} (${request.method ?? 'GET'} ${request.path}) DIFFERS:\n  ${problems.join('\n  ')}`);
      }
    }
    if (list.some((s) => s.pairs)) await resetEmbarks(db, data.embarkQuests);
  } finally {
    await db.end();
  }
  return failed;
}
