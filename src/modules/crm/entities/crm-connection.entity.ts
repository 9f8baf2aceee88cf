import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';
import { DATETIME } from '../../../database/column-types';

/** The one CRM connection (resources.md, "CRM connection"): tokens AES-256-GCM-encrypted. */
@Entity('crm_connections')
export class CrmConnection {
  /** Always 1. */
  @PrimaryColumn({ type: 'integer' })
  id: number;

  @Column({ type: 'varchar', length: 32 })
  provider: string;

  @Column({ type: 'text' })
  accessTokenCipher: string;

  @Column({ type: 'text', nullable: true })
  refreshTokenCipher: string | null;

  /** When the access token expires. */
  @Column({ type: DATETIME })
  expiresAt: Date;

  /** Where the CRM's API is (`api_domain` of the token answer). */
  @Column({ type: 'varchar', length: 255 })
  apiDomain: string;

  @Column({ type: 'varchar', length: 36 })
  connectedByAdminUuid: string;

  @Column({ type: DATETIME })
  connectedAt: Date;

  @CreateDateColumn({ type: DATETIME })
  createdAt: Date;

  @UpdateDateColumn({ type: DATETIME })
  updatedAt: Date;
}
