import { Injectable, PipeTransform } from '@nestjs/common';
import { notFound } from './api-error.js';
import { isUuid } from '../value-checks.js';

/** How much of a malformed id the 404 repeats. */
const SHOWN = 40;

/**
 * A path id that is not a UUID names nothing that could exist: 404 (the OpenAPI document: "A UUID;
 * anything else is a 404"), before any SQL, with a detail that says what an id looks like.
 */
@Injectable()
export class UuidParam implements PipeTransform<string, string> {
  transform(value: string): string {
    if (!isUuid(value)) throw notFound(malformedIdDetail(value));
    return value.toLowerCase();
  }
}

const malformedIdDetail = (value: string): string =>
  `No resource has the id "${value.length > SHOWN ? `${value.slice(0, SHOWN)}…` : value}": ids are UUIDs (8-4-4-4-12 hexadecimal digits, e.g. 0f8fad5b-d9cb-469f-a165-70867728950e).`;
