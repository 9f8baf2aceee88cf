import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';
import { DATETIME } from '../../../database/column-types';

/** An `/auth-crm` state not used yet: deleted when `/get-token` uses it, so it works once. */
@Entity('crm_oauth_states')
export class CrmOAuthState {
  @PrimaryColumn({ type: 'varchar', length: 64 })
  nonce: string;

  @Column({ type: 'varchar', length: 36 })
  adminUuid: string;

  @Column({ type: DATETIME })
  expiresAt: Date;

  @CreateDateColumn({ type: DATETIME })
  createdAt: Date;
}
