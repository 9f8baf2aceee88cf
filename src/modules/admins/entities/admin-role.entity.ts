import { Column, Entity, PrimaryColumn } from 'typeorm';

export const ADMIN_ROLE_NAMES = ['superAdmin', 'admin', 'accounting'] as const;
export type AdminRoleName = (typeof ADMIN_ROLE_NAMES)[number];

/** Seeded by the foundation migration: 1 superAdmin, 2 admin, 3 accounting. */
@Entity('admin_roles')
export class AdminRole {
  @PrimaryColumn({ type: 'integer' })
  id: number;

  @Column({ type: 'varchar', length: 32, unique: true })
  name: AdminRoleName;
}
