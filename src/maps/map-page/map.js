// The map page: MapLibre GL JS over the service's own vector tiles (GET /twins/tiles/{z}/{x}/{y}.mvt,
// described by GET /twins/tiles.json). The token and organization live in sessionStorage only (never in
// a URL): MapLibre's transformRequest adds them as headers to the service's requests. Clusters are
// circles sized by their count, labelled by HTML markers (a label layer would need glyph files from
// elsewhere); the "In view" list makes every cluster and twin on screen reachable by keyboard.
import * as maplibregl from '/map/assets/maplibre-gl.mjs';

const STORAGE = { token: 'twin-map-token', organization: 'twin-map-organization' };
const FILTERS = ['is_public', 'is_supplier', 'is_personal', 'characteristics', 'organization'];
const MAX_LABELS = 300;
const MAX_LISTED = 60;

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

const map = new maplibregl.Map({
  container: 'map',
  center: [0, 20],
  zoom: 1,
  keyboard: true,
  attributionControl: { compact: true, customAttribution: 'Country outlines: Natural Earth (world-atlas)' },
  style: {
    version: 8,
    sources: { countries: { type: 'geojson', data: `${location.origin}/map/assets/countries.geojson` } },
    layers: [
      { id: 'sea', type: 'background', paint: { 'background-color': '#d6e6f2' } },
      { id: 'countries', type: 'fill', source: 'countries', paint: { 'fill-color': '#f7f5ef', 'fill-outline-color': '#8f969c' } },
    ],
  },
  // Only the service's own requests carry the credentials.
  transformRequest: (url) => (url.startsWith(`${location.origin}/twins/`) ? { url, headers: authHeaders() } : { url }),
});
map.addControl(new maplibregl.NavigationControl(), 'top-right');
// The tests (and curious people) reach the map object here.
window.twinMap = map;

const TWIN_LAYERS = [
  {
    id: 'clusters',
    type: 'circle',
    source: 'twins',
    'source-layer': 'twins',
    filter: ['==', ['get', 'cluster'], true],
    paint: {
      'circle-color': '#1f5fa8',
      'circle-opacity': 0.8,
      'circle-stroke-color': '#fff',
      'circle-stroke-width': 1.5,
      'circle-radius': ['interpolate', ['linear'], ['sqrt', ['get', 'count']], 1, 9, 10, 18, 100, 34, 1000, 60],
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

const filterQuery = () => {
  const form = new FormData($('#filters'));
  const query = new URLSearchParams();
  for (const name of FILTERS) {
    const value = String(form.get(name) ?? '').trim();
    if (value) query.set(name, value);
  }
  return query.toString();
};

async function apiError(response) {
  try {
    const body = await response.json();
    return body.errors?.map((e) => e.detail).join(' ') || `${response.status}`;
  } catch {
    return `${response.status}`;
  }
}

/** Loads the TileJSON of the current filters and shows its tiles; fits the twins on the first load. */
async function showTwins({ fit }) {
  const query = filterQuery();
  status('Loading…');
  const response = await fetch(`/twins/tiles.json${query ? `?${query}` : ''}`, { headers: authHeaders() });
  if (!response.ok) {
    status(`The service refused: ${await apiError(response)}`, true);
    return false;
  }
  const tileJson = await response.json();
  for (const layer of TWIN_LAYERS) if (map.getLayer(layer.id)) map.removeLayer(layer.id);
  if (map.getSource('twins')) map.removeSource('twins');
  map.addSource('twins', { type: 'vector', tiles: tileJson.tiles, minzoom: tileJson.minzoom, maxzoom: tileJson.maxzoom });
  for (const layer of TWIN_LAYERS) map.addLayer(layer);
  if (fit) {
    const [west, south, east, north] = tileJson.bounds;
    map.fitBounds([[west, south], [east, north]], { padding: 40, maxZoom: 14, animate: false });
  }
  status(query ? `Showing the twins you can see, filtered by ${decodeURIComponent(query)}.` : 'Showing every twin you can see.');
  return true;
}

// Cluster labels and the keyboard list, rebuilt whenever the map comes to rest.
let labels = [];
function refreshInView() {
  for (const marker of labels) marker.remove();
  labels = [];
  const list = $('#in-view');
  list.replaceChildren();
  if (!map.getSource('twins')) return;
  const features = map.queryRenderedFeatures({ layers: ['clusters', 'points'] });
  const seen = new Set();
  for (const feature of features) {
    const [lon, lat] = feature.geometry.coordinates;
    const key = feature.properties.cluster ? `c${lon},${lat}` : feature.properties.id;
    if (seen.has(key)) continue;
    seen.add(key);
    if (feature.properties.cluster && labels.length < MAX_LABELS) {
      const label = document.createElement('span');
      label.className = 'cluster-label';
      label.textContent = String(feature.properties.count);
      label.setAttribute('aria-hidden', 'true');
      labels.push(new maplibregl.Marker({ element: label }).setLngLat([lon, lat]).addTo(map));
    }
    if (list.children.length < MAX_LISTED) {
      const item = document.createElement('li');
      const button = document.createElement('button');
      button.type = 'button';
      if (feature.properties.cluster) {
        button.textContent = `${feature.properties.count} ${feature.properties.count === 1 ? "twin" : "twins"} here (zoom in)`;
        button.addEventListener('click', () => map.easeTo({ center: [lon, lat], zoom: Math.min(map.getZoom() + 3, 22) }));
      } else {
        button.textContent = feature.properties.name;
        button.addEventListener('click', () => openPopup(feature.properties, [lon, lat]));
      }
      item.append(button);
      list.append(item);
    }
  }
}
map.on('idle', refreshInView);

function openPopup(properties, lngLat) {
  const content = document.createElement('div');
  const name = document.createElement('strong');
  name.textContent = properties.name;
  const kind = document.createElement('p');
  kind.textContent = `${properties.public ? 'Public' : 'Not public'} · ${properties.supplier ? 'supplier' : 'not a supplier'}`;
  const link = document.createElement('a');
  link.href = `/twins/${properties.id}/`;
  link.textContent = 'The twin (JSON:API)';
  // The document needs the credentials: fetched with them and shown, rather than a bare navigation (a 401).
  const details = document.createElement('pre');
  details.hidden = true;
  link.addEventListener('click', async (event) => {
    event.preventDefault();
    const response = await fetch(link.href, { headers: authHeaders() });
    details.textContent = response.ok ? JSON.stringify((await response.json()).data.attributes, null, 1).slice(0, 1500) : await apiError(response);
    details.hidden = false;
  });
  content.append(name, kind, link, details);
  new maplibregl.Popup({ maxWidth: '320px' }).setLngLat(lngLat).setDOMContent(content).addTo(map);
}

map.on('click', 'points', (event) => {
  const feature = event.features[0];
  openPopup(feature.properties, feature.geometry.coordinates);
});
map.on('click', 'clusters', (event) => {
  map.easeTo({ center: event.features[0].geometry.coordinates, zoom: Math.min(map.getZoom() + 3, 22) });
});
for (const layer of ['points', 'clusters']) {
  map.on('mouseenter', layer, () => (map.getCanvas().style.cursor = 'pointer'));
  map.on('mouseleave', layer, () => (map.getCanvas().style.cursor = ''));
}

function showSignedIn(signedIn) {
  $('#sign-in').hidden = signedIn;
  $('#filters').hidden = !signedIn;
}

$('#sign-in').addEventListener('submit', async (event) => {
  event.preventDefault();
  sessionStorage.setItem(STORAGE.token, $('#token').value.trim());
  sessionStorage.setItem(STORAGE.organization, $('#organization').value.trim());
  $('#token').value = '';
  if (await showTwins({ fit: true })) showSignedIn(true);
  else sessionStorage.clear();
});
$('#filters').addEventListener('submit', (event) => {
  event.preventDefault();
  showTwins({ fit: false });
});
$('#filters').addEventListener('change', () => showTwins({ fit: false }));
$('#sign-out').addEventListener('click', () => {
  sessionStorage.removeItem(STORAGE.token);
  sessionStorage.removeItem(STORAGE.organization);
  for (const layer of TWIN_LAYERS) if (map.getLayer(layer.id)) map.removeLayer(layer.id);
  if (map.getSource('twins')) map.removeSource('twins');
  refreshInView();
  showSignedIn(false);
  status('Signed out.');
});

map.on('load', () => {
  if (credentials().token && credentials().organization) {
    showTwins({ fit: true }).then((ok) => showSignedIn(ok));
  }
});
