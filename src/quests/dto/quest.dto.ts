import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsInt, IsNotEmpty, IsString, IsUUID, Max, MaxLength, Min, ValidateBy, ValidateIf } from 'class-validator';
import { canonicalPrice, MAX_PRICE } from '../../common/money.js';

const MAX_SUMMARY = 2000;

/** May be left out, but not sent as null (null is no value for these columns). */
const Optional = () => ValidateIf((_: object, value: unknown) => value !== undefined);
const MAX_DESCRIPTION = 100_000;

/** `price` in the OpenAPI document: a JSON number or a decimal string (IsPrice below). */
const PRICE_SCHEMA = {
  oneOf: [
    { type: 'number', minimum: 0, maximum: Number(MAX_PRICE) },
    { type: 'string', pattern: '^\\s*\\d{1,10}(\\.\\d{1,2})?\\s*$' },
  ],
};

/** `price`: a JSON number or a decimal string, ≥ 0, at most 2 decimals. */
const IsPrice = () =>
  ValidateBy({
    name: 'isPrice',
    validator: {
      validate: (value: unknown) => canonicalPrice(value) !== undefined,
      defaultMessage: () => `price must be a number or decimal string from 0 to ${MAX_PRICE} with at most 2 decimals`,
    },
  });

export class CreateQuestAttributes {
  @ApiProperty({ example: 'Old town coffee trail', minLength: 1, maxLength: 255 })
  @IsString()
  @IsNotEmpty()
  @MaxLength(255)
  name: string;

  @ApiPropertyOptional({ example: 'Five roasters in one morning.', maxLength: MAX_SUMMARY })
  @Optional()
  @IsString()
  @MaxLength(MAX_SUMMARY)
  summary?: string;

  @ApiPropertyOptional({ example: 'Start at the market hall, then follow the river…', maxLength: MAX_DESCRIPTION })
  @Optional()
  @IsString()
  @MaxLength(MAX_DESCRIPTION)
  description?: string;

  @ApiPropertyOptional({ name: 'summary-image', format: 'uuid', example: '0b6f0d3e-3c1b-4c69-9d55-5a0a4f1f7b21', description: 'An image id from `POST /images/` of the caller\'s organization.' })
  @Optional()
  @IsUUID('all', { message: 'summary-image must be an image id (a UUID)' })
  'summary-image'?: string;

  @ApiPropertyOptional({
    ...PRICE_SCHEMA,
    example: '4.50',
    description: `Beyond the contract: the price an embarking twin pays, a number or decimal string from 0 to ${MAX_PRICE} with at most 2 decimals. Default 0.`,
  })
  @Optional()
  @IsPrice()
  price?: number | string;
}

export class UpdateQuestAttributes {
  @ApiPropertyOptional({ example: true })
  @Optional()
  @IsBoolean()
  public?: boolean;

  @ApiPropertyOptional({ example: 'Old town coffee trail', minLength: 1, maxLength: 255 })
  @Optional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(255)
  name?: string;

  @ApiPropertyOptional({ example: 'Five roasters in one morning.', maxLength: MAX_SUMMARY })
  @Optional()
  @IsString()
  @MaxLength(MAX_SUMMARY)
  summary?: string;

  @ApiPropertyOptional({ maxLength: MAX_DESCRIPTION })
  @Optional()
  @IsString()
  @MaxLength(MAX_DESCRIPTION)
  description?: string;

  @ApiPropertyOptional({ ...PRICE_SCHEMA, example: '0.10', description: `A number or decimal string from 0 to ${MAX_PRICE} with at most 2 decimals.` })
  @Optional()
  @IsPrice()
  price?: number | string;

  @ApiPropertyOptional({ name: 'summary-image', type: 'string', format: 'uuid', example: '0b6f0d3e-3c1b-4c69-9d55-5a0a4f1f7b21', nullable: true, description: 'An image id, or null to remove it.' })
  @ValidateIf((_, value) => value !== undefined && value !== null)
  @IsUUID('all', { message: 'summary-image must be an image id (a UUID) or null' })
  'summary-image'?: string | null;
}

export class CreateTaskAttributes {
  @ApiProperty({ example: 'Taste the house espresso', minLength: 1, maxLength: 255 })
  @IsString()
  @IsNotEmpty()
  @MaxLength(255)
  name: string;

  @ApiPropertyOptional({ example: 'Ask for the single origin.', maxLength: MAX_DESCRIPTION })
  @Optional()
  @IsString()
  @MaxLength(MAX_DESCRIPTION)
  description?: string;

  @ApiPropertyOptional({ type: 'integer', example: 0, minimum: 0, maximum: 1_000_000, description: 'Order within the quest; default: after the last task.' })
  @Optional()
  @IsInt()
  @Min(0)
  @Max(1_000_000)
  position?: number;
}
