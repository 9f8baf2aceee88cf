import type { Admin } from '../admins/entities/admin.entity';
import type { User } from '../users/entities/user.entity';

/** The caller, loaded from the database by the access guard (never taken from the token alone). */
export type Principal = { kind: 'user'; user: User } | { kind: 'admin'; admin: Admin };

/** The verified claims of an access token. */
export interface UserAccessClaims {
  userUuid: string;
  contactUuid: string;
  companyUuid: string;
  isAdmin: false;
}

export interface AdminAccessClaims {
  adminUuid: string;
  roleId: number;
  roleName: string;
}

export type AccessClaims = UserAccessClaims | AdminAccessClaims;

export interface RequestWithPrincipal {
  principal?: Principal;
  user?: AccessClaims;
}
