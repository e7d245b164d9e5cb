import { Injectable, PipeTransform } from '@nestjs/common';
import { notFound } from './api-error.js';
import { isUuid } from '../value-checks.js';

/** A path id that is not a UUID names nothing that could exist: 404, before any SQL runs. */
@Injectable()
export class UuidParam implements PipeTransform<string, string> {
  transform(value: string): string {
    if (!isUuid(value)) throw notFound();
    return value.toLowerCase();
  }
}
