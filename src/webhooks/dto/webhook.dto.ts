import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayNotEmpty, ArrayUnique, IsArray, IsBoolean, IsIn, IsString, MaxLength, ValidateIf } from 'class-validator';
import { WEBHOOK_EVENT_TYPES } from '../webhook-events.js';

const URL_DESCRIPTION =
  'Where deliveries are POSTed: `https`, resolving to public addresses only (private, loopback, link-local, carrier-grade NAT and ' +
  'metadata addresses are refused, here and again at every delivery). At most 2048 characters.';
const EVENTS_DESCRIPTION = `The change kinds to receive, at least one, each once: ${WEBHOOK_EVENT_TYPES.map((type) => `\`${type}\``).join(', ')}.`;
const EVENT_TYPES_MESSAGE = `each of events must be one of ${WEBHOOK_EVENT_TYPES.join(', ')}`;

export class CreateWebhookAttributes {
  @ApiProperty({ example: 'https://partner.example.com/hooks/twins', maxLength: 2048, description: URL_DESCRIPTION })
  @IsString()
  @MaxLength(2048)
  url: string;

  @ApiProperty({ type: 'array', items: { type: 'string', enum: [...WEBHOOK_EVENT_TYPES] }, minItems: 1, uniqueItems: true, example: ['event.created', 'twin.updated'], description: EVENTS_DESCRIPTION })
  @IsArray()
  @ArrayNotEmpty()
  @ArrayMaxSize(WEBHOOK_EVENT_TYPES.length)
  @ArrayUnique()
  @IsIn(WEBHOOK_EVENT_TYPES, { each: true, message: EVENT_TYPES_MESSAGE })
  events: string[];

  @ApiPropertyOptional({ type: 'string', nullable: true, maxLength: 1024, example: 'Order sync' })
  @ValidateIf((_, value) => value !== undefined && value !== null)
  @IsString()
  @MaxLength(1024)
  description?: string | null;
}

/** Every attribute optional; a given one must be valid. */
export class UpdateWebhookAttributes {
  @ApiPropertyOptional({ example: 'https://partner.example.com/hooks/v2', maxLength: 2048, description: URL_DESCRIPTION })
  @ValidateIf((_, value) => value !== undefined)
  @IsString()
  @MaxLength(2048)
  url?: string;

  @ApiPropertyOptional({ type: 'array', items: { type: 'string', enum: [...WEBHOOK_EVENT_TYPES] }, minItems: 1, uniqueItems: true, example: ['event.created'], description: EVENTS_DESCRIPTION })
  @ValidateIf((_, value) => value !== undefined)
  @IsArray()
  @ArrayNotEmpty()
  @ArrayMaxSize(WEBHOOK_EVENT_TYPES.length)
  @ArrayUnique()
  @IsIn(WEBHOOK_EVENT_TYPES, { each: true, message: EVENT_TYPES_MESSAGE })
  events?: string[];

  @ApiPropertyOptional({ type: 'string', nullable: true, maxLength: 1024, example: null })
  @ValidateIf((_, value) => value !== undefined && value !== null)
  @IsString()
  @MaxLength(1024)
  description?: string | null;

  @ApiPropertyOptional({ example: false, description: 'A disabled webhook gets nothing new; what was queued for it waits, and is sent when it is enabled again (within the retry window).' })
  @ValidateIf((_, value) => value !== undefined)
  @IsBoolean()
  enabled?: boolean;
}
