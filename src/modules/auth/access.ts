import type { AdminRoleName } from '../admins/entities/admin-role.entity';

export const ACCESS_RULE = 'access:rule';

export const MACHINE_CREDENTIALS = ['api-key', 'log-shipper-key', 'callback-token', 'basic'] as const;
export type MachineCredential = (typeof MACHINE_CREDENTIALS)[number];

/** Who may call a route. Every route declares one (the access guard refuses routes without). */
export type AccessRule =
  | { kind: 'public' }
  | { kind: 'refresh-token' }
  | { kind: 'user'; ownerOnly: boolean }
  | { kind: 'admin'; roles: readonly AdminRoleName[] }
  | { kind: 'machine'; credential: MachineCredential };
