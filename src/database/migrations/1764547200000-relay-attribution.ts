import { MigrationInterface, QueryRunner } from 'typeorm';

/** Who sent a message, decided once (integrations.md "Who sent it"). */
export class RelayAttribution1764547200000 implements MigrationInterface {
  name = 'RelayAttribution1764547200000';

  async up(_qr: QueryRunner): Promise<void> {}

  async down(_qr: QueryRunner): Promise<void> {}
}
