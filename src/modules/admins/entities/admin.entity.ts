import { Column, Entity, JoinColumn, ManyToOne } from 'typeorm';
import { DATETIME } from '../../../database/column-types';
import { BaseEntity } from '../../../database/base.entity';
import { AdminRole } from './admin-role.entity';

@Entity('admins')
export class Admin extends BaseEntity {
  @Column({ type: 'varchar', length: 254, unique: true })
  email: string;

  @Column({ type: 'varchar', length: 200 })
  fullName: string;

  @Column({ type: 'varchar', length: 255, select: false })
  passwordHash: string;

  @ManyToOne(() => AdminRole, { nullable: false, eager: true })
  @JoinColumn({ name: 'role_id' })
  role: AdminRole;

  @Column({ type: 'integer' })
  roleId: number;

  @Column({ type: 'boolean', default: true })
  isActive: boolean;

  @Column({ type: DATETIME, nullable: true })
  lastLoginAt: Date | null;

  @Column({ type: 'integer', default: 0 })
  passwordVersion: number;

  /** When the password last changed (change, reset, accepted invitation): refresh tokens issued before are refused. */
  @Column({ type: DATETIME, nullable: true })
  passwordChangedAt: Date | null;
}
