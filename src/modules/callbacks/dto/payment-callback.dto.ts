import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/**
 * A Xendit-compatible invoice callback (integrations.md). Documentation only: the body is read
 * as it comes (`id` and `status` are required), and fields not listed here are kept raw.
 */
export class PaymentCallbackDto {
  @ApiProperty({ description: 'The gateway invoice id', example: '62f00ac409accd62c85673c4' })
  id: string;

  @ApiProperty({ description: 'The billing number we sent as external_id', example: 'INV/2026/11/000123' })
  external_id: string;

  @ApiProperty({ enum: ['PENDING', 'PAID', 'SETTLED', 'EXPIRED'] })
  status: string;

  @ApiProperty({ example: 150000 })
  amount: number;

  @ApiPropertyOptional({ example: 150000 })
  paid_amount?: number;

  @ApiProperty({ example: 'IDR' })
  currency: string;

  @ApiPropertyOptional({ format: 'date-time', example: '2026-11-21T18:58:35.534Z' })
  paid_at?: string;

  @ApiPropertyOptional({ example: 'BANK_TRANSFER' })
  payment_method?: string;

  @ApiPropertyOptional({ example: 'MANDIRI' })
  payment_channel?: string;
}
