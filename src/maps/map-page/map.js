// The map page: MapLibre GL JS over the service's own vector tiles (GET /twins/tiles/{z}/{x}/{y}.mvt,
// described by GET /twins/tiles.json). The token and organization live in sessionStorage only (never in
// a URL): MapLibre's transformRequest adds them as headers to the service's requests. Clusters are
// circles sized by their count, labelled by HTML markers (a label layer would need glyph files from
// elsewhere); the "In view" list makes every cluster and twin on screen reachable by keyboard. A twin
// of the caller's organization can show its track (GET /twins/<id>/track?format=line) as a line, and its
// latest geofence crossings (its timeline, GET /events/?category=geofence with X-Twin). The
// organization's geofences (GET /geofences/) are outlines under the twins, named in a popup on a click
// (no label layer: that too would need glyph files).
// Versioned by the service like the page's own URLs (map-assets.ts): no import map, which would be an inline script.
import * as maplibregl from '/map/assets/maplibre-gl.mjs';

const STORAGE = { token: 'twin-map-token', organization: 'twin-map-organization' };
const FILTERS = ['is_public', 'is_supplier', 'is_personal', 'characteristics', 'organization'];
const MAX_LISTED = 60;
/** A cluster's circle radius (px) by the square root of its count: the layer's paint and the label grouping share it. */
const CLUSTER_RADIUS = [[1, 9], [10, 18], [100, 34], [1000, 60]];
/** Labels closer than this (px) would print over each other: their clusters share one. */
const LABEL_SPACING = 24;
/** The grid (px) the grouping looks up neighbours in: at least the largest reach, a 60 px radius. */
const GROUP_CELL = 64;
/** The periods a track is shown for, back from now. */
const TRACK_PERIODS = [
  { label: 'last hour', ms: 3_600_000 },
  { label: 'last day', ms: 86_400_000 },
];
/** The most positions one track page holds (the API's limit), and the most the page draws. */
const TRACK_PAGE_SIZE = 10_000;
const TRACK_CAP = 50_000;
/** Geofences asked for a page at a time (the API's default PAGE_SIZE_MAX), and the most the page draws. */
const GEOFENCE_PAGE_SIZE = 100;
const GEOFENCE_CAP = 2_000;
/** The crossings a twin's popup lists, newest first. */
const CROSSINGS_SHOWN = 5;

const $ = (selector) => document.querySelector(selector);
const status = (text, isError = false) => {
  $('#status').textContent = text;
  $('#status').classList.toggle('error', isError);
};
const credentials = () => ({ token: sessionStorage.getItem(STORAGE.token), organization: sessionStorage.getItem(STORAGE.organization) });
const authHeaders = () => {
  const { token, organization } = credentials();
  return { Authorization: `Token ${token}`, 'X-Organization': organization };
};
/** The service's own API, on the origin this page came from: the only URLs the credentials go to. */
const SERVICE_PATHS = ['/twins/', '/geofences/', '/events/'];
const forService = (url) => SERVICE_PATHS.some((path) => url.startsWith(`${location.origin}${path}`));
/**
 * A URL the service wrote (a track's `next` link) on the origin this page came from: the service writes
 * them with its PUBLIC_URL or the host it was asked under, which need not be this origin.
 */
const onThisOrigin = (href) => {
  const url = new URL(href, location.href);
  return `${location.origin}${url.pathname}${url.search}`;
};

// The page names its files' versioned URLs (index.html); MapLibre's own worker URL would not be.
const container = $('#map');
const fromPage = (path) => new URL(path, location.href).href;
maplibregl.setWorkerUrl(fromPage(container.dataset.worker));

const map = new maplibregl.Map({
  container,
  center: [0, 20],
  zoom: 1,
  keyboard: true,
  attributionControl: { compact: true, customAttribution: 'Country outlines: Natural Earth (world-atlas)' },
  style: {
    version: 8,
    // Sliced into tiles down to zoom 6 only, and drawn from those deeper: the outlines hold no more
    // detail, and slicing them at every zoom keeps MapLibre's worker (one, on a two-core machine) busy
    // ahead of the twins' tiles.
    sources: { countries: { type: 'geojson', data: fromPage(container.dataset.countries), maxzoom: 6 } },
    layers: [
      { id: 'sea', type: 'background', paint: { 'background-color': '#d6e6f2' } },
      { id: 'countries', type: 'fill', source: 'countries', paint: { 'fill-color': '#f7f5ef', 'fill-outline-color': '#8f969c' } },
    ],
  },
  // Only the service's own API requests carry the credentials.
  transformRequest: (url) => (forService(url) ? { url, headers: authHeaders() } : { url }),
});
map.addControl(new maplibregl.NavigationControl(), 'top-right');
// The tests (and curious people) reach the map object here.
window.twinMap = map;
const styleLoaded = new Promise((resolve) => map.once('load', resolve));

const TWIN_LAYERS = [
  {
    id: 'clusters',
    type: 'circle',
    source: 'twins',
    'source-layer': 'twins',
    filter: ['==', ['get', 'cluster'], true],
    paint: {
      'circle-color': '#1f5fa8',
      'circle-opacity': 0.85,
      'circle-stroke-color': '#fff',
      'circle-stroke-width': 1.5,
      'circle-radius': ['interpolate', ['linear'], ['sqrt', ['get', 'count']], ...CLUSTER_RADIUS.flat()],
    },
  },
  {
    id: 'points',
    type: 'circle',
    source: 'twins',
    'source-layer': 'twins',
    filter: ['!', ['has', 'cluster']],
    paint: {
      'circle-color': ['case', ['get', 'supplier'], '#c0661b', ['get', 'public'], '#2a8a3e', '#6b4fa0'],
      'circle-radius': 6,
      'circle-stroke-color': '#fff',
      'circle-stroke-width': 1.5,
    },
  },
];

function clusterRadius(count) {
  const at = Math.sqrt(count);
  if (at <= CLUSTER_RADIUS[0][0]) return CLUSTER_RADIUS[0][1];
  for (let i = 1; i < CLUSTER_RADIUS.length; i++) {
    const [[x0, y0], [x1, y1]] = [CLUSTER_RADIUS[i - 1], CLUSTER_RADIUS[i]];
    if (at <= x1) return y0 + ((at - x0) / (x1 - x0)) * (y1 - y0);
  }
  return CLUSTER_RADIUS.at(-1)[1];
}

const filterQuery = () => {
  const form = new FormData($('#filters'));
  const query = new URLSearchParams();
  for (const name of FILTERS) {
    const value = String(form.get(name) ?? '').trim();
    if (value) query.set(name, value);
  }
  return query.toString();
};

/**
 * fetch() with the credentials (for the service's own URLs only), asking again after a 503: the service
 * answers it when its database is busy or out of reach for a moment, with `Retry-After` (docs/API.md),
 * and such a request is safe to repeat.
 */
async function fetchFromService(url, headers = {}) {
  const absolute = new URL(url, location.href).href;
  // The extra headers (X-Twin) are the service's too.
  const init = forService(absolute) ? { headers: { ...authHeaders(), ...headers } } : {};
  for (let attempt = 1; ; attempt++) {
    const response = await fetch(absolute, init);
    if (response.status !== 503 || attempt === 3) return response;
    await new Promise((resolve) => setTimeout(resolve, 1000 * Number(response.headers.get('retry-after') ?? 1)));
  }
}

async function apiError(response) {
  try {
    const body = await response.json();
    return body.errors?.map((e) => e.detail).join(' ') || response.statusText;
  } catch {
    return response.statusText;
  }
}

function removeTwins() {
  for (const layer of TWIN_LAYERS) if (map.getLayer(layer.id)) map.removeLayer(layer.id);
  if (map.getSource('twins')) map.removeSource('twins');
}

// Each call supersedes the ones before it: a slow answer to an older filter must not replace a newer one.
let generation = 0;

/** West-south and east-north corners of the twins shown (the TileJSON's bounds). */
let twinsBox;

/** Fits the map to the twins shown, in the map's box as it is now. */
function fitToTwins() {
  map.fitBounds(twinsBox, { padding: 40, maxZoom: 14, animate: false });
  // Twins towards both poles need the whole height of the world, which the padding leaves no room for
  // (MapLibre shows nothing beyond the poles, so it stops zooming out short of them): edge to edge.
  const view = map.getBounds();
  if (!view.contains(twinsBox[0]) || !view.contains(twinsBox[1])) map.fitBounds(twinsBox, { padding: 0, maxZoom: 14, animate: false });
}

/**
 * Loads the TileJSON of the current filters and shows its tiles, fitting the map to the twins when
 * asked: 'shown', 'refused' (the status says why), or 'stale' when a later call took over.
 */
async function showTwins({ fit }) {
  const mine = ++generation;
  const query = filterQuery();
  status('Loading…');
  let response;
  try {
    response = await fetchFromService(`/twins/tiles.json${query ? `?${query}` : ''}`);
  } catch {
    if (mine !== generation) return 'stale';
    status('The service cannot be reached.', true);
    return 'refused';
  }
  if (!response.ok) {
    const reason = await apiError(response);
    if (mine !== generation) return 'stale';
    status(`The service refused (${response.status}): ${reason}`, true);
    return 'refused';
  }
  const tileJson = await response.json();
  // A submit can come before the style has loaded; sources can only be added after.
  await styleLoaded;
  if (mine !== generation) return 'stale';
  removeTwins();
  // A popup may show a twin the new filters leave out.
  popup?.remove();
  map.addSource('twins', {
    type: 'vector',
    // The tiles of the origin this page came from, whatever host name the service builds its URLs with:
    // the credentials go to nothing else.
    tiles: tileJson.tiles.map((url) => url.replace(/^https?:\/\/[^/]+/, location.origin)),
    minzoom: tileJson.minzoom,
    maxzoom: tileJson.maxzoom,
    // No requests for the (empty) rest of the world.
    bounds: tileJson.bounds,
  });
  for (const layer of TWIN_LAYERS) map.addLayer(layer);
  const [west, south, east, north] = tileJson.bounds;
  twinsBox = [[west, south], [east, north]];
  if (fit) fitToTwins();
  status(query ? `Showing the twins you can see, filtered by ${decodeURIComponent(query)}.` : 'Showing every twin you can see.');
  return 'shown';
}

// MapLibre does not ask again for a tile that failed: a 503 (a busy database; safe to repeat) would
// leave a hole in the map until the tile is dropped from its cache. Asked again here, a few times.
// The map region is aria-busy while a tile waits to be asked for again.
const tileRetries = new Map();
let retriesDue = 0;
function retryTile(url) {
  const tile = /\/twins\/tiles\/(\d+)\/(\d+)\/(\d+)\.mvt/.exec(url ?? '');
  const attempt = (tileRetries.get(url) ?? 0) + 1;
  if (!tile || attempt > 3) return false;
  tileRetries.set(url, attempt);
  const [z, x, y] = tile.slice(1).map(Number);
  retriesDue++;
  container.setAttribute('aria-busy', 'true');
  setTimeout(() => {
    if (map.getSource('twins')) map.refreshTiles('twins', [{ z, x, y }]);
    if (--retriesDue === 0) container.removeAttribute('aria-busy');
  }, 1000 * attempt);
  return true;
}

// Tiles refused later (a token revoked, an organization left) say so rather than leave the map empty.
map.on('error', (event) => {
  const code = event.error?.status;
  if (code === 503 && retryTile(event.error.url)) return;
  if (code === 401 || code === 403) status(`The service refused the tiles (${code}): sign out and sign in again.`, true);
  else status(`Part of the map did not load: ${event.error?.message ?? 'unknown error'}.`, true);
});

/**
 * What is on screen: the twins, and the clusters grouped where their circles or labels overlap (one
 * label with the sum of their counts, at their weighted centre: the grid puts a dense place's twins in
 * neighbouring cells, whose labels would otherwise print over each other).
 */
function inView() {
  const clusters = [];
  const points = [];
  if (!map.getLayer('points')) return { clusters, points };
  const seen = new Set();
  for (const feature of map.queryRenderedFeatures({ layers: ['clusters', 'points'] })) {
    const [lng, lat] = feature.geometry.coordinates;
    const properties = feature.properties;
    const key = properties.cluster ? `${lng},${lat}` : properties.id;
    if (seen.has(key)) continue;
    seen.add(key);
    if (properties.cluster) clusters.push({ count: Number(properties.count), at: map.project([lng, lat]) });
    else points.push({ properties, lngLat: [lng, lat] });
  }
  return { clusters: groupClusters(clusters), points: points.sort((a, b) => String(a.properties.name).localeCompare(String(b.properties.name))) };
}

/**
 * Clusters near each other on screen as one: the biggest first, each joining the first group within
 * reach (its circle's radius, at least LABEL_SPACING) of its weighted centre, found through a grid of
 * GROUP_CELL px so that a view of thousands of clusters takes one pass.
 */
function groupClusters(clusters) {
  const cells = new Map();
  const groups = [];
  for (const { count, at } of clusters.sort((a, b) => b.count - a.count)) {
    const [cx, cy] = [Math.floor(at.x / GROUP_CELL), Math.floor(at.y / GROUP_CELL)];
    let group;
    for (let dx = -1; dx <= 1 && !group; dx++) {
      for (let dy = -1; dy <= 1 && !group; dy++) {
        group = cells.get(`${cx + dx},${cy + dy}`)?.find((g) => Math.hypot(g.x - at.x, g.y - at.y) < Math.max(clusterRadius(g.count), LABEL_SPACING));
      }
    }
    if (!group) {
      group = { x: at.x, y: at.y, count };
      groups.push(group);
      const key = `${cx},${cy}`;
      cells.set(key, [...(cells.get(key) ?? []), group]);
      continue;
    }
    const total = group.count + count;
    group.x = (group.x * group.count + at.x * count) / total;
    group.y = (group.y * group.count + at.y * count) / total;
    group.count = total;
  }
  return groups.map((g) => ({ count: g.count, lngLat: map.unproject([g.x, g.y]).toArray() }));
}

const zoomInto = (lngLat) => map.easeTo({ center: lngLat, zoom: Math.min(map.getZoom() + 3, 22) });

// Cluster labels and the keyboard list, rebuilt when the map comes to rest and shows something else.
let labels = [];
let shown = '';
function refreshInView() {
  const { clusters, points } = inView();
  const key = JSON.stringify([clusters, points.map((p) => p.properties.id)]);
  if (key === shown) return;
  shown = key;
  for (const marker of labels) marker.remove();
  // Every cluster labelled: the grouping keeps labels LABEL_SPACING apart, which bounds them by the screen's size.
  labels = clusters.map(({ count, lngLat }) => {
    const label = document.createElement('span');
    label.className = 'cluster-label';
    label.textContent = String(count);
    // The list below says it, as a button; the label is for the eyes.
    label.setAttribute('aria-hidden', 'true');
    return new maplibregl.Marker({ element: label }).setLngLat(lngLat).addTo(map);
  });

  const list = $('#in-view');
  // Keyboard users stay in the list when it is rebuilt under them (a cluster button zooms the map).
  const focused = [...list.querySelectorAll('button')].indexOf(document.activeElement);
  const items = [
    ...clusters.map(({ count, lngLat }) => [`${count} ${count === 1 ? 'twin' : 'twins'} here (zoom in)`, () => zoomInto(lngLat)]),
    ...points.map(({ properties, lngLat }) => [properties.name, () => openPopup(properties, lngLat)]),
  ];
  list.replaceChildren(
    ...items.slice(0, MAX_LISTED).map(([text, action]) => {
      const item = document.createElement('li');
      const button = document.createElement('button');
      button.type = 'button';
      button.textContent = text;
      button.addEventListener('click', action);
      item.append(button);
      return item;
    }),
  );
  if (items.length > MAX_LISTED) {
    const more = document.createElement('li');
    more.textContent = `… and ${items.length - MAX_LISTED} more: zoom in to list them.`;
    list.append(more);
  }
  if (focused >= 0) {
    const buttons = list.querySelectorAll('button');
    (buttons[Math.min(focused, buttons.length - 1)] ?? map.getCanvas()).focus();
  }
}
map.on('idle', refreshInView);

let popup;
/** The twin whose popup is open, and the line in it that says what its track is doing. */
let popupTwin;
function openPopup(properties, lngLat) {
  popup?.remove();
  const content = document.createElement('div');
  const name = document.createElement('strong');
  name.textContent = properties.name;
  const kind = document.createElement('p');
  kind.textContent = `${properties.public ? 'Public' : 'Not public'} · ${properties.supplier ? 'supplier' : 'not a supplier'}`;
  const link = document.createElement('a');
  link.href = `/twins/${properties.id}/`;
  link.textContent = 'The twin (JSON:API)';
  // The document needs the credentials: fetched with them and shown, rather than a bare navigation (a 401).
  // Fetched once when the popup opens (its organization says whether the track is the caller's), again
  // on a click if that failed.
  let loaded;
  const twin = () => {
    loaded ??= loadTwin(link.href).then((result) => {
      if (!result.document) loaded = undefined;
      return result;
    });
    return loaded;
  };
  const details = document.createElement('pre');
  details.hidden = true;
  link.addEventListener('click', async (event) => {
    event.preventDefault();
    const { document: body, error } = await twin();
    details.textContent = body ? JSON.stringify(body.data.attributes, null, 1).slice(0, 1500) : error;
    details.hidden = false;
  });
  const controls = document.createElement('div');
  controls.className = 'track-controls';
  const note = document.createElement('div');
  note.className = 'track-note';
  note.setAttribute('role', 'status');
  // Its latest geofence crossings, for a twin of the caller's organization only (filled in below).
  const crossings = document.createElement('div');
  crossings.className = 'crossings';
  crossings.hidden = true;
  content.append(name, kind, link, controls, note, crossings, details);
  popupTwin = { id: properties.id, note };
  if (shownTrack?.twin.id === properties.id) echoTrackNote();
  popup = new maplibregl.Popup({ maxWidth: '320px' }).setLngLat(lngLat).setDOMContent(content).addTo(map);

  // Only twins of the caller's organization have a track (others' answer 404): no control for those.
  // Without the twin's document (the service busy or out of reach) the controls are offered, and the
  // track route says.
  twin().then(({ document: body }) => {
    const owner = body?.data?.relationships?.organization?.data?.id;
    const mine = credentials().organization;
    if (owner && mine && owner.toLowerCase() !== mine.toLowerCase()) {
      controls.textContent = 'Its track is kept for its own organization only.';
      controls.classList.add('not-yours');
      return;
    }
    // Its timeline is its own organization's only: asked for when the document says so, not on a guess.
    if (owner && mine) showCrossings(properties.id, crossings);
    controls.replaceChildren(
      ...TRACK_PERIODS.map((period) => {
        const button = document.createElement('button');
        button.type = 'button';
        button.textContent = `Track: ${period.label}`;
        button.addEventListener('click', () => showTrack({ id: properties.id, name: String(properties.name) }, period));
        return button;
      }),
    );
  });
}

/**
 * The twin's latest geofence crossings, newest first, into its popup: its timeline (GET /events/ with
 * X-Twin) filtered to the category `geofence`, each named by its geofence (from the layer's list) and
 * its `occurred` time. Failures are a short note; never throws.
 */
async function showCrossings(twinId, element) {
  const heading = document.createElement('div');
  heading.className = 'crossings-heading';
  heading.textContent = 'Geofence crossings';
  const body = document.createElement('div');
  body.className = 'crossings-note';
  body.textContent = 'Loading…';
  element.replaceChildren(heading, body);
  element.hidden = false;
  const query = new URLSearchParams({ category: 'geofence', page_size: String(CROSSINGS_SHOWN) });
  let events;
  try {
    const response = await fetchFromService(`/events/?${query}`, { 'X-Twin': twinId });
    if (!response.ok) {
      body.textContent = `The crossings did not load: the service refused (${response.status}): ${await apiError(response)}`;
      body.classList.add('error');
      return;
    }
    events = (await response.json()).data ?? [];
  } catch {
    body.textContent = 'The crossings did not load: the service cannot be reached.';
    body.classList.add('error');
    return;
  }
  // The names come with the geofences' list: wait for it when it is on its way.
  await geofences.loading;
  const crossed = events.filter((event) => ['geofence.entered', 'geofence.exited'].includes(event.attributes?.name));
  if (crossed.length === 0) {
    body.textContent = 'None yet.';
    return;
  }
  const list = document.createElement('ul');
  list.append(
    ...crossed.slice(0, CROSSINGS_SHOWN).map(({ attributes }) => {
      const item = document.createElement('li');
      const id = String(attributes.data?.geofence ?? '');
      const named = geofences.names.get(id);
      const geofence = document.createElement('span');
      geofence.className = 'geofence-name';
      geofence.textContent = named ?? `a geofence not on the map (${id.slice(0, 8)}…)`;
      item.append(attributes.name === 'geofence.entered' ? 'entered ' : 'left ', geofence, ' at ');
      item.append(attributes.occurred ? timeElement(attributes.occurred) : 'an unknown time');
      return item;
    }),
  );
  body.replaceWith(list);
}

/** A twin's document (`{document}`), or why not (`{error}`); never throws. */
async function loadTwin(url) {
  try {
    const response = await fetchFromService(url);
    if (response.ok) return { document: await response.json() };
    return { error: `The service refused (${response.status}): ${await apiError(response)}` };
  } catch {
    return { error: 'The service cannot be reached.' };
  }
}

// The track: one line (source `track`) under the twins, its first and last positions marked (source
// `track-ends`), what it shows said in the side panel (#track) and in the twin's popup.
const TRACK_LAYERS = [
  {
    id: 'track-line',
    type: 'line',
    source: 'track',
    layout: { 'line-join': 'round', 'line-cap': 'round' },
    paint: { 'line-color': '#b5175a', 'line-width': 3, 'line-opacity': 0.9 },
  },
  {
    id: 'track-ends',
    type: 'circle',
    source: 'track-ends',
    paint: {
      // The start a small white dot; the end (where the twin is now, under its own point) a wide ring.
      'circle-radius': ['match', ['get', 'end'], 'start', 5, 11],
      'circle-color': ['match', ['get', 'end'], 'start', '#ffffff', 'rgba(181, 23, 90, 0.2)'],
      'circle-stroke-color': '#b5175a',
      'circle-stroke-width': 2.5,
    },
  },
];

// Each request of a track supersedes the ones before it, as does clearing it.
let trackGeneration = 0;
/** The track on the map or on its way: `{twin, period, message: [text or Node], isError}`. */
let shownTrack;

/** Says what the track is doing, in the side panel and in its twin's popup when that is open. */
function trackNote(message, isError = false) {
  shownTrack.message = message;
  shownTrack.isError = isError;
  $('#track').hidden = false;
  $('#track-status').replaceChildren(...message.map((part) => (typeof part === 'string' ? part : part.cloneNode(true))));
  $('#track-status').classList.toggle('error', isError);
  echoTrackNote();
}
function echoTrackNote() {
  if (!popupTwin || popupTwin.id !== shownTrack?.twin.id) return;
  popupTwin.note.replaceChildren(...shownTrack.message.map((part) => (typeof part === 'string' ? part : part.cloneNode(true))));
  popupTwin.note.classList.toggle('error', shownTrack.isError);
}

const TIME = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
/** A `<time>` of an instant the service wrote (microseconds, which Date does not take, cut to milliseconds). */
function timeElement(iso) {
  const element = document.createElement('time');
  element.dateTime = iso;
  const date = new Date(iso.replace(/(\.\d{3})\d+/, '$1'));
  element.textContent = Number.isNaN(date.getTime()) ? iso : TIME.format(date);
  return element;
}

/** Removes the track from the map (the panel and notes stay, to say why). */
function removeTrackLayers() {
  for (const layer of TRACK_LAYERS) if (map.getLayer(layer.id)) map.removeLayer(layer.id);
  for (const source of ['track', 'track-ends']) if (map.getSource(source)) map.removeSource(source);
}

function clearTrack() {
  trackGeneration++;
  removeTrackLayers();
  if (shownTrack && popupTwin?.id === shownTrack.twin.id) popupTwin.note.replaceChildren();
  shownTrack = undefined;
  $('#track').hidden = true;
}

/**
 * Longitudes unwrapped so that each step is under 180°: a track across the antimeridian (179.9 to
 * -179.9) is drawn as the short step it is, not as a line around the world (MapLibre draws longitudes
 * past ±180° on the next copy of the world).
 */
function unwrapped(coordinates) {
  let shift = 0;
  return coordinates.map(([lon, lat], i) => {
    if (i > 0) shift += Math.round((coordinates[i - 1][0] - lon - shift) / 360) * 360;
    return shift ? [lon + shift, lat] : [lon, lat];
  });
}

/**
 * Loads the twin's track for the period, back from now, page by page (each page is one more line
 * feature; its `next` link the rest) up to TRACK_CAP positions, and draws it as one line. Failures
 * (network, a refusal, a 503 after the helper's retries) are a short note; the map is left as it was.
 */
async function showTrack(twin, period) {
  const mine = ++trackGeneration;
  removeTrackLayers();
  shownTrack = { twin, period };
  trackNote([`Loading the ${period.label} of ${twin.name}'s track…`]);
  const query = new URLSearchParams({ since: new Date(Date.now() - period.ms).toISOString(), format: 'line', page_size: String(TRACK_PAGE_SIZE) });
  let url = `/twins/${encodeURIComponent(twin.id)}/track?${query}`;
  const coordinates = [];
  let newest;
  let capped = false;
  try {
    while (url) {
      const response = await fetchFromService(url);
      if (mine !== trackGeneration) return;
      if (!response.ok) {
        const reason = response.status === 503 ? 'the service is busy; try again in a moment.' : `the service refused (${response.status}): ${await apiError(response)}`;
        if (mine === trackGeneration) trackNote([`The track did not load: ${reason}`], true);
        return;
      }
      const page = await response.json();
      if (mine !== trackGeneration) return;
      for (const feature of page.features ?? []) {
        const { type, coordinates: vertices } = feature.geometry ?? {};
        // One position in a page is a Point.
        for (const vertex of type === 'Point' ? [vertices] : type === 'LineString' ? vertices : []) coordinates.push(vertex);
        newest = feature.properties?.times?.at(-1) ?? newest;
      }
      const next = page.links?.find((link) => link.rel === 'next')?.href;
      if (next && coordinates.length >= TRACK_CAP) capped = true;
      if (!next || capped) break;
      const following = new URL(onThisOrigin(next));
      // The last page asks for no more than the cap leaves room for.
      following.searchParams.set('page_size', String(Math.min(TRACK_PAGE_SIZE, TRACK_CAP - coordinates.length)));
      url = following.href;
    }
  } catch {
    if (mine === trackGeneration) trackNote(['The track did not load: the service cannot be reached.'], true);
    return;
  }
  if (coordinates.length === 0) {
    trackNote([`${twin.name} has no positions in the ${period.label}.`]);
    return;
  }
  await styleLoaded;
  if (mine !== trackGeneration) return;
  const line = unwrapped(coordinates);
  const ends = [
    ...(line.length > 1 ? [{ type: 'Feature', geometry: { type: 'Point', coordinates: line[0] }, properties: { end: 'start' } }] : []),
    { type: 'Feature', geometry: { type: 'Point', coordinates: line.at(-1) }, properties: { end: 'end' } },
  ];
  map.addSource('track', {
    type: 'geojson',
    data: { type: 'FeatureCollection', features: line.length > 1 ? [{ type: 'Feature', geometry: { type: 'LineString', coordinates: line }, properties: { twin: twin.id } }] : [] },
  });
  map.addSource('track-ends', { type: 'geojson', data: { type: 'FeatureCollection', features: ends } });
  // Under the twins: their points stay on top, to be clicked.
  for (const layer of TRACK_LAYERS) map.addLayer(layer, map.getLayer('clusters') ? 'clusters' : undefined);
  const count = coordinates.length.toLocaleString('en');
  trackNote([
    `${twin.name}, ${period.label}: ${count} ${coordinates.length === 1 ? 'position' : 'positions'}, the newest `,
    ...(newest ? [timeElement(newest)] : []),
    '.',
    ...(capped ? [` Capped at ${TRACK_CAP.toLocaleString('en')} positions: later ones are not drawn.`] : []),
  ]);
  // The whole track in view, unless it is already.
  const bounds = line.reduce((box, vertex) => box.extend(vertex), new maplibregl.LngLatBounds(line[0], line[0]));
  const view = map.getBounds();
  if (!view.contains(bounds.getSouthWest()) || !view.contains(bounds.getNorthEast())) map.fitBounds(bounds, { padding: 60, maxZoom: 16, animate: false });
}

$('#track-clear').addEventListener('click', clearTrack);

// The organization's geofences: a faint fill and an outline (source `geofences`) under the track and
// the twins, loaded after sign-in and forgotten at sign-out; the side panel says how many (#geofences).
const GEOFENCE_LAYERS = [
  { id: 'geofences-fill', type: 'fill', source: 'geofences', paint: { 'fill-color': '#0f7b7b', 'fill-opacity': 0.08 } },
  { id: 'geofences-line', type: 'line', source: 'geofences', layout: { 'line-join': 'round' }, paint: { 'line-color': '#0f7b7b', 'line-width': 1.5, 'line-opacity': 0.85 } },
];
const EMPTY = { type: 'FeatureCollection', features: [] };
/** The geofences shown: their names by id (for the crossings), and the load on its way (never rejects). */
const geofences = { generation: 0, names: new Map(), loading: Promise.resolve() };

styleLoaded.then(() => {
  map.addSource('geofences', { type: 'geojson', data: EMPTY });
  // Under whatever is already there (the twins may have come first).
  const above = ['track-line', 'track-ends', 'clusters', 'points'].find((id) => map.getLayer(id));
  for (const layer of GEOFENCE_LAYERS) map.addLayer(layer, above);
});

function geofenceNote(text, isError = false) {
  $('#geofences').hidden = !text;
  $('#geofences-status').textContent = text;
  $('#geofences-status').classList.toggle('error', isError);
}

/** Forgets the geofences shown (a load on its way is dropped when it comes back). */
function clearGeofences() {
  geofences.generation++;
  geofences.names = new Map();
  geofences.loading = Promise.resolve();
  map.getSource('geofences')?.setData(EMPTY);
  geofenceNote('');
}

function loadGeofences() {
  clearGeofences();
  geofences.loading = fetchGeofences(geofences.generation);
  return geofences.loading;
}

/**
 * GET /geofences/ page by page (its `links.next`, put on this origin) up to GEOFENCE_CAP, then drawn as
 * one FeatureCollection. A failure is a note in the side panel; the map is left as it was.
 */
async function fetchGeofences(mine) {
  geofenceNote('Loading the geofences…');
  const features = [];
  let url = `/geofences/?page_size=${GEOFENCE_PAGE_SIZE}`;
  let capped = false;
  try {
    while (url) {
      const response = await fetchFromService(url);
      if (mine !== geofences.generation) return;
      if (!response.ok) {
        const reason = response.status === 503 ? 'the service is busy; sign in again in a moment.' : `the service refused (${response.status}): ${await apiError(response)}`;
        if (mine === geofences.generation) geofenceNote(`The geofences did not load: ${reason}`, true);
        return;
      }
      const page = await response.json();
      if (mine !== geofences.generation) return;
      for (const { id, attributes } of page.data ?? []) {
        if (features.length === GEOFENCE_CAP) break;
        if (!attributes?.geometry) continue;
        features.push({ type: 'Feature', id: features.length, geometry: attributes.geometry, properties: { id, name: String(attributes.name ?? '') } });
      }
      const next = page.links?.next;
      if (next && features.length >= GEOFENCE_CAP) capped = true;
      url = next && !capped ? onThisOrigin(next) : undefined;
    }
  } catch {
    if (mine === geofences.generation) geofenceNote('The geofences did not load: the service cannot be reached.', true);
    return;
  }
  await styleLoaded;
  if (mine !== geofences.generation) return;
  geofences.names = new Map(features.map((feature) => [feature.properties.id, feature.properties.name]));
  map.getSource('geofences')?.setData({ type: 'FeatureCollection', features });
  const count = features.length.toLocaleString('en');
  geofenceNote(
    features.length === 0
      ? 'Your organization has no geofences.'
      : `${count} ${features.length === 1 ? 'geofence' : 'geofences'} outlined (click one for its name).${capped ? ` Capped at ${GEOFENCE_CAP.toLocaleString('en')}: the rest are not drawn.` : ''}`,
  );
}

// A click on a geofence (not on a twin, whose own popup wins) names it, and every other one there.
map.on('click', 'geofences-fill', (event) => {
  const twins = ['points', 'clusters'].filter((id) => map.getLayer(id));
  if (twins.length && map.queryRenderedFeatures(event.point, { layers: twins }).length) return;
  const names = [...new Set(event.features.map((feature) => String(feature.properties.name)))];
  popup?.remove();
  const content = document.createElement('div');
  content.className = 'geofence-popup';
  const heading = document.createElement('strong');
  heading.textContent = names.length === 1 ? 'Geofence' : 'Geofences';
  const list = document.createElement('ul');
  list.append(
    ...names.map((name) => {
      const item = document.createElement('li');
      item.textContent = name;
      return item;
    }),
  );
  content.append(heading, list);
  popup = new maplibregl.Popup({ maxWidth: '280px' }).setLngLat(event.lngLat).setDOMContent(content).addTo(map);
});

map.on('click', 'points', (event) => {
  const feature = event.features[0];
  openPopup(feature.properties, feature.geometry.coordinates);
});
map.on('click', 'clusters', (event) => zoomInto(event.features[0].geometry.coordinates));
for (const layer of ['points', 'clusters']) {
  map.on('mouseenter', layer, () => (map.getCanvas().style.cursor = 'pointer'));
  map.on('mouseleave', layer, () => (map.getCanvas().style.cursor = ''));
}

// The filters are open on a wide screen and folded on a phone-sized one (the same width as map.css's).
const narrow = matchMedia('(max-width: 640px)');
const fitFilters = () => ($('#filter-panel').open = !narrow.matches);
narrow.addEventListener('change', fitFilters);
fitFilters();

function showSignedIn(signedIn) {
  $('#sign-in').hidden = signedIn;
  $('#filters').hidden = !signedIn;
}

/** Forgets the credentials and what they showed; the status keeps saying why when `reason` is given. */
function signOut(reason) {
  sessionStorage.removeItem(STORAGE.token);
  sessionStorage.removeItem(STORAGE.organization);
  generation++;
  popup?.remove();
  clearTrack();
  clearGeofences();
  removeTwins();
  refreshInView();
  showSignedIn(false);
  if (!reason) status('Signed out.');
  $('#token').focus();
}

$('#sign-in').addEventListener('submit', async (event) => {
  event.preventDefault();
  const submit = $('#sign-in button[type=submit]');
  submit.disabled = true;
  sessionStorage.setItem(STORAGE.token, $('#token').value.trim());
  sessionStorage.setItem(STORAGE.organization, $('#organization').value.trim());
  const result = await showTwins({ fit: false });
  submit.disabled = false;
  if (result === 'refused') {
    signOut('refused');
    return;
  }
  $('#token').value = '';
  showSignedIn(true);
  loadGeofences();
  // The filters took the sign-in form's place, and the map's box changed with them: fit in the new one.
  if (result === 'shown') {
    map.resize();
    fitToTwins();
  }
  // Keyboard users land on the map: the arrow keys move it, + and - zoom.
  map.getCanvas().focus();
});
$('#filters').addEventListener('submit', (event) => {
  event.preventDefault();
  showTwins({ fit: false });
});
$('#filters').addEventListener('change', () => showTwins({ fit: false }));
$('#sign-out').addEventListener('click', () => signOut());

// A reload of the tab keeps the session: show its twins straight away.
if (credentials().token && credentials().organization) {
  showSignedIn(true);
  showTwins({ fit: true }).then((result) => (result === 'refused' ? signOut('refused') : loadGeofences()));
}
