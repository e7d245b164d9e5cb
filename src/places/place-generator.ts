import { rename, rm } from 'node:fs/promises';
import { createWriteStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Prng } from './prng.js';
import {
  ADJECTIVES, CATEGORIES, CHARACTERISTICS, CITIES, Category, City, DESCRIPTION_TEMPLATES, FAMILY_NAMES,
  FIRST_NAMES, NOUNS, REVIEW_DETAILS, REVIEW_OPENINGS,
} from './place-catalog.js';

/**
 * Synthetic places for tests and benchmarks: clustered around real cities, with Google-Places-like
 * contact data, opening hours, photos and reviews. Feature `i` depends only on (seed, i), so a run
 * with a bigger `count` starts with exactly the features of a smaller one.
 */

export interface PlaceFeature {
  type: 'Feature';
  id: string;
  geometry: { type: 'Point'; coordinates: [number, number] };
  properties: Record<string, unknown>;
}

/** Reviews and "relative time" texts are computed against this fixed date, not the clock. */
const REFERENCE_TIME = Date.UTC(2025, 5, 1) / 1000;
const DAY_NAMES = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];
const ID_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-';
const DIGITS = '0123456789';
const PROVIDERS = ['google', 'google', 'google', 'google', 'foursquare', 'yelp'];

export function generatePlace(seed: string, index: number): PlaceFeature {
  const rng = new Prng(`${seed}:${index}`);
  const city = rng.pick(CITIES);
  const category = rng.pick(CATEGORIES);
  const subCategory = rng.pick(category.subCategories);
  const [lon, lat] = scatter(rng, city);
  const name = placeName(rng, city, category, subCategory);
  const streetLine = street(rng, city);
  const zipCode = zip(rng, city.zipPattern);
  const address = `${streetLine}, ${zipCode} ${city.name}, ${city.country}`;
  const services = rng.sample(category.services, rng.int(1, 4));
  const characteristics = rng.sample(CHARACTERISTICS, rng.int(1, 4));
  const provider = rng.pick(PROVIDERS);
  const placeId = `ChIJ${rng.chars(ID_ALPHABET, 15)}${index.toString(36).padStart(8, '0')}`;
  const slug = `${name.toLowerCase().normalize('NFD').replace(/[^a-z0-9]+/g, '')}${index.toString(36)}`;
  const hours = openingHours(rng, category);
  const phone = `${city.phonePrefix} ${rng.chars(DIGITS, 3)} ${rng.chars(DIGITS, 4)}`;
  const properties: Record<string, unknown> = {
    place_id: placeId,
    provider,
    name,
    description: description(rng, name, city, subCategory, streetLine, services, characteristics),
    category: category.category,
    subCategory,
    services,
    characteristics,
    tags: [slugify(category.category), slugify(subCategory), slugify(city.name)],
    phone_number: phone,
    website: rng.chance(0.8) ? `https://www.${slug}.com` : '',
    twitter: rng.chance(0.3) ? `https://twitter.com/${slug.slice(0, 15)}` : '',
    facebook: rng.chance(0.5) ? `https://www.facebook.com/${slug}` : '',
    instagram: rng.chance(0.4) ? `https://www.instagram.com/${slug}` : '',
    address,
    street: streetLine,
    city: city.name,
    state: city.state,
    zipCode,
    country: city.country,
    priceRange: rng.pick(category.priceRanges),
    rating: Math.round((2.5 + rng.next() * 2.5) * 10) / 10,
    opening_hours: { weekday_text: hours.weekdayText, periods: hours.periods },
    timeTable: hours.timeTable,
    provider_info: { photos: photos(rng), reviews: reviews(rng, city) },
  };
  return { type: 'Feature', id: placeId, geometry: { type: 'Point', coordinates: [lon, lat] }, properties };
}

export function* generatePlaces(seed: string, count: number): Generator<PlaceFeature> {
  for (let index = 0; index < count; index++) yield generatePlace(seed, index);
}

export interface WritePlacesOptions {
  count: number;
  out: string;
  seed: string;
  /** Called after every chunk written: features written so far. */
  onProgress?: (written: number) => void;
}

const FEATURES_PER_CHUNK = 500;

/**
 * Writes a FeatureCollection, one feature per line, through a stream with backpressure (the
 * generator only produces the next chunk when the file has taken the previous one): memory stays
 * flat whatever the count. Written to `<out>.partial` then renamed, so a failed run leaves no
 * truncated file under the real name.
 */
export async function writePlacesFile(options: WritePlacesOptions): Promise<{ bytes: number }> {
  const partial = `${options.out}.partial`;
  let bytes = 0;
  function* chunks(): Generator<string> {
    yield '{"type":"FeatureCollection","features":[\n';
    for (let start = 0; start < options.count; start += FEATURES_PER_CHUNK) {
      const end = Math.min(options.count, start + FEATURES_PER_CHUNK);
      const lines: string[] = [];
      for (let index = start; index < end; index++) lines.push(JSON.stringify(generatePlace(options.seed, index)));
      yield `${lines.join(',\n')}${end < options.count ? ',\n' : '\n'}`;
      options.onProgress?.(end);
    }
    yield ']}\n';
  }
  const source = Readable.from(
    (function* counted() {
      for (const chunk of chunks()) {
        bytes += Buffer.byteLength(chunk);
        yield chunk;
      }
    })(),
    { objectMode: false },
  );
  try {
    await pipeline(source, createWriteStream(partial));
    await rename(partial, options.out);
  } catch (error) {
    await rm(partial, { force: true });
    throw error;
  }
  return { bytes };
}

function scatter(rng: Prng, city: City): [number, number] {
  const northKm = rng.gaussian() * city.spreadKm;
  const eastKm = rng.gaussian() * city.spreadKm;
  const lat = clamp(city.lat + northKm / 110.574, -90, 90);
  let lon = city.lon + eastKm / (111.32 * Math.cos((city.lat * Math.PI) / 180));
  if (lon > 180) lon -= 360;
  if (lon < -180) lon += 360;
  return [round6(lon), round6(lat)];
}

function placeName(rng: Prng, city: City, category: Category, subCategory: string): string {
  const noun = rng.pick(category.nouns);
  switch (rng.int(0, 5)) {
    case 0:
      return `The ${rng.pick(ADJECTIVES)} ${rng.pick(NOUNS)}`;
    case 1:
      return `${rng.pick(FAMILY_NAMES)}'s ${noun}`;
    case 2:
      return `${rng.pick(NOUNS)} & ${rng.pick(NOUNS)}`;
    case 3:
      return `${city.name} ${rng.pick(NOUNS)} ${noun}`;
    case 4:
      return `${rng.pick(FIRST_NAMES)}'s ${subCategory}`;
    default:
      return `${rng.pick(ADJECTIVES)} ${rng.pick(NOUNS)} ${noun}`;
  }
}

function street(rng: Prng, city: City): string {
  const number = rng.int(1, 250);
  const name = rng.pick(city.streets);
  return city.language === 'en' || city.language === 'ja' ? `${number} ${name}` : `${name} ${number}`;
}

function zip(rng: Prng, pattern: string): string {
  return pattern.replace(/[#A]/g, (slot) => (slot === '#' ? String(rng.int(0, 9)) : String.fromCharCode(65 + rng.int(0, 25))));
}

function description(rng: Prng, name: string, city: City, sub: string, streetLine: string, services: string[], chars: string[]): string {
  return rng
    .pick(DESCRIPTION_TEMPLATES)
    .replace('{adj}', rng.pick(ADJECTIVES).toLowerCase())
    .replace('{sub}', sub.toLowerCase())
    .replace('{city}', city.name)
    .replace('{name}', name)
    .replace('{street}', streetLine)
    .replace('{svc}', services.join(', '))
    .replace('{char}', chars[0])
    .replace('{year}', String(rng.int(1950, 2022)));
}

interface Hours {
  weekdayText: string[];
  periods: { open: { day: number; time: string }; close?: { day: number; time: string } }[];
  timeTable: Record<string, { day: string; startTime: number; endTime: number }>;
}

/** Google-style `weekday_text` (Monday first) and `periods` (day 0 = Sunday), and the spec's timeTable (1 = Monday). */
function openingHours(rng: Prng, category: Category): Hours {
  const [open, close] = rng.pick(category.hours);
  const mondayClosed = rng.chance(category.mondayClosed);
  const sundayClosed = category.mondayClosed > 0 && rng.chance(0.2);
  const hours: Hours = { weekdayText: [], periods: [], timeTable: {} };
  DAY_NAMES.forEach((day, i) => {
    const closed = (i === 0 && mondayClosed) || (i === 6 && sundayClosed);
    if (closed) {
      hours.weekdayText.push(`${day}: Closed`);
      return;
    }
    // Weekends open an hour later for most places.
    const start = i >= 5 && open > 0 && open < 12 ? open + 1 : open;
    const googleDay = (i + 1) % 7;
    if (start === 0 && close === 24) {
      hours.weekdayText.push(`${day}: Open 24 hours`);
      hours.periods.push({ open: { day: googleDay, time: '0000' } });
    } else {
      hours.weekdayText.push(`${day}: ${clock(start)} – ${clock(close % 24)}`);
      hours.periods.push({ open: { day: googleDay, time: hhmm(start) }, close: { day: close >= 24 ? (googleDay + 1) % 7 : googleDay, time: hhmm(close % 24) } });
    }
    hours.timeTable[String(i + 1)] = { day, startTime: start, endTime: close === 24 ? 24 : close % 24 };
  });
  return hours;
}

function photos(rng: Prng) {
  const sizes: [number, number][] = [[4032, 3024], [3024, 4032], [1920, 1080], [1080, 1920], [2048, 1536], [800, 600]];
  return Array.from({ length: rng.int(1, 5) }, () => {
    const [width, height] = rng.pick(sizes);
    const author = `${rng.pick(FIRST_NAMES)} ${rng.pick(FAMILY_NAMES)}`;
    return {
      width,
      height,
      photo_reference: `Aap_uE${rng.chars(ID_ALPHABET, 90)}`,
      html_attributions: [`<a href="https://maps.google.com/maps/contrib/${rng.chars(DIGITS, 21)}">${author}</a>`],
    };
  });
}

function reviews(rng: Prng, city: City) {
  return Array.from({ length: rng.int(0, 5) }, () => {
    const rating = rng.int(1, 5);
    const ageSeconds = rng.int(3600, 4 * 365 * 86400);
    const contributor = rng.chars(DIGITS, 21);
    return {
      text: `${rng.pick(REVIEW_OPENINGS)} ${rng.sample(REVIEW_DETAILS, rng.int(1, 3)).join(' ')}`,
      time: REFERENCE_TIME - ageSeconds,
      rating,
      language: city.language,
      author_url: `https://www.google.com/maps/contrib/${contributor}/reviews`,
      author_name: `${rng.pick(FIRST_NAMES)} ${rng.pick(FAMILY_NAMES).charAt(0)}.`,
      profile_photo_url: `https://lh3.googleusercontent.com/a-/${rng.chars(ID_ALPHABET, 40)}=s128-c0x00000000-cc-rp-mo`,
      relative_time_description: relativeTime(ageSeconds),
    };
  });
}

function relativeTime(seconds: number): string {
  const days = Math.floor(seconds / 86400);
  if (days < 1) return 'in the last day';
  if (days < 7) return days === 1 ? 'a day ago' : `${days} days ago`;
  if (days < 30) return days < 14 ? 'a week ago' : `${Math.floor(days / 7)} weeks ago`;
  if (days < 365) return days < 60 ? 'a month ago' : `${Math.floor(days / 30)} months ago`;
  return days < 730 ? 'a year ago' : `${Math.floor(days / 365)} years ago`;
}

function clock(hour: number): string {
  const h = hour % 12 === 0 ? 12 : hour % 12;
  return `${h}:00 ${hour < 12 ? 'AM' : 'PM'}`;
}

const hhmm = (hour: number) => `${String(hour).padStart(2, '0')}00`;
const slugify = (text: string) => text.toLowerCase().normalize('NFD').replace(/[\u0300-\u036f]/g, '').replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
const clamp = (value: number, min: number, max: number) => Math.min(max, Math.max(min, value));
const round6 = (value: number) => Math.round(value * 1e6) / 1e6;
