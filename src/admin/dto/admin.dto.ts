import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsISO8601, IsNotEmpty, IsOptional, IsString, MaxLength } from 'class-validator';

export class OrganizationAttributes {
  @ApiProperty({ example: 'Acme Outdoors', maxLength: 255 })
  @IsString()
  @IsNotEmpty()
  @MaxLength(255)
  name: string;
}

export class AccountAttributes {
  @ApiProperty({ example: 'Ada Lovelace', maxLength: 255 })
  @IsString()
  @IsNotEmpty()
  @MaxLength(255)
  name: string;
}

export class TokenAttributes {
  @ApiPropertyOptional({
    type: 'string',
    format: 'date-time',
    nullable: true,
    example: '2027-01-01T00:00:00Z',
    description: 'When the token stops working (ISO 8601, in the future); never when omitted or null.',
  })
  @IsOptional()
  @IsISO8601({ strict: true }, { message: 'expires must be an ISO 8601 timestamp' })
  expires?: string;
}
