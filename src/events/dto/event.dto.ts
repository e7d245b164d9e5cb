import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsNotEmpty, IsObject, IsString, MaxLength, registerDecorator, ValidateIf, type ValidationOptions } from 'class-validator';
import { isInstant } from '../../common/json-api/query.js';
import { AsSent } from '../../common/json-api/resource-body.js';
import { MAX_EVENT_DATA_BYTES, serializedSize } from '../event-data.js';

/** `data` serialised as compact JSON must fit in MAX_EVENT_DATA_BYTES (64 KiB). */
function FitsEventDataLimit(options?: ValidationOptions) {
  return (target: object, propertyName: string) =>
    registerDecorator({
      name: 'fitsEventDataLimit',
      target: target.constructor,
      propertyName,
      options: { message: `data must be at most ${MAX_EVENT_DATA_BYTES} bytes when serialised as JSON`, ...options },
      validator: { validate: (value: unknown) => value === undefined || serializedSize(value) <= MAX_EVENT_DATA_BYTES },
    });
}

/** `occurred`: null, or one instant (isInstant). */
function IsOccurred(options?: ValidationOptions) {
  return (target: object, propertyName: string) =>
    registerDecorator({
      name: 'isOccurred',
      target: target.constructor,
      propertyName,
      options: {
        message: 'occurred must be null or an ISO 8601 timestamp with seconds and an offset (Z or ±hh:mm), at most microseconds, of a real date (years 1–9999)',
        ...options,
      },
      validator: { validate: (value: unknown) => value === null || (typeof value === 'string' && isInstant(value)) },
    });
}

const OCCURRED_DESCRIPTION =
  "When the event happened by the device's clock (ISO 8601 with an offset, at most microseconds), for apps that record offline and sync later; " +
  'answered in UTC with six fraction digits, like `timestamp`, which stays the time the service received it. Null or absent: not known.';

const EXAMPLE_DATA = { steps: 4200, device: 'watch', route: { km: 3.2 } };

export class CreateEventAttributes {
  @ApiProperty({ example: 'walk', minLength: 1, maxLength: 255 })
  @IsString()
  @IsNotEmpty()
  @MaxLength(255)
  name: string;

  @ApiProperty({ example: 'activity', minLength: 1, maxLength: 255 })
  @IsString()
  @IsNotEmpty()
  @MaxLength(255)
  category: string;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    example: EXAMPLE_DATA,
    description: `Free-form JSON object of at most ${MAX_EVENT_DATA_BYTES} bytes serialised (400 with pointer /data/attributes/data above), stored and returned as sent whatever its member names.`,
  })
  @AsSent()
  @IsObject({ message: 'data must be a JSON object' })
  @FitsEventDataLimit()
  data: Record<string, unknown>;

  @ApiPropertyOptional({ type: 'string', format: 'date-time', nullable: true, example: '2026-11-21T18:02:41.5+01:00', description: OCCURRED_DESCRIPTION })
  @ValidateIf((_, value) => value !== undefined)
  @IsOccurred()
  occurred?: string | null;
}

/** Every attribute optional; a given one must be valid (null is not "absent"). */
export class UpdateEventAttributes {
  @ApiPropertyOptional({ example: 'run', minLength: 1, maxLength: 255 })
  @ValidateIf((_, value) => value !== undefined)
  @IsString()
  @IsNotEmpty()
  @MaxLength(255)
  name?: string;

  @ApiPropertyOptional({ example: 'activity', minLength: 1, maxLength: 255 })
  @ValidateIf((_, value) => value !== undefined)
  @IsString()
  @IsNotEmpty()
  @MaxLength(255)
  category?: string;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    example: { steps: 5000, device: null },
    description: 'Keys merged into the stored data: a value replaces, null removes the key, unnamed keys are kept.',
  })
  @ValidateIf((_, value) => value !== undefined)
  @AsSent()
  @IsObject({ message: 'data must be a JSON object' })
  @FitsEventDataLimit()
  data?: Record<string, unknown>;

  @ApiPropertyOptional({ type: 'string', format: 'date-time', nullable: true, example: '2026-11-21T18:02:41.5+01:00', description: `${OCCURRED_DESCRIPTION} Null clears it.` })
  @ValidateIf((_, value) => value !== undefined)
  @IsOccurred()
  occurred?: string | null;
}
