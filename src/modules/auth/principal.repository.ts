import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { EntityRowReader } from '../../database/entity-row-reader';
import { AdminRole } from '../admins/entities/admin-role.entity';
import { Admin } from '../admins/entities/admin.entity';
import { Company } from '../companies/entities/company.entity';
import { Contact } from '../users/entities/contact.entity';
import { User } from '../users/entities/user.entity';

/**
 * The access guard's lookups, run on every authenticated request: the caller with what the
 * routes need (a user with its contact and company, an admin with its role), each in one
 * indexed query whose SQL is built once.
 */
@Injectable()
export class PrincipalRepository {
  private readonly user: EntityRowReader<User>;
  private readonly contact: EntityRowReader<Contact>;
  private readonly company: EntityRowReader<Company>;
  private readonly admin: EntityRowReader<Admin>;
  private readonly role: EntityRowReader<AdminRole>;
  private readonly userSql: string;
  private readonly adminSql: string;
  private readonly statements = new Map<string, SqliteStatement>();

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    this.user = new EntityRowReader(dataSource, User, 'u');
    this.contact = new EntityRowReader(dataSource, Contact, 'ct');
    this.company = new EntityRowReader(dataSource, Company, 'co');
    this.admin = new EntityRowReader(dataSource, Admin, 'a');
    this.role = new EntityRowReader(dataSource, AdminRole, 'r');
    const param = dataSource.options.type === 'postgres' ? '$1' : '?';
    this.userSql =
      `SELECT ${this.user.selectList()}, ${this.contact.selectList()}, ${this.company.selectList()} ` +
      `FROM users u INNER JOIN contacts ct ON ct.id = u.contact_id INNER JOIN companies co ON co.id = u.company_id ` +
      `WHERE u.uuid = ${param}`;
    this.adminSql =
      `SELECT ${this.admin.selectList()}, ${this.role.selectList()} ` +
      `FROM admins a INNER JOIN admin_roles r ON r.id = a.role_id WHERE a.uuid = ${param}`;
  }

  async findUser(uuid: string): Promise<User | null> {
    const rows = await this.query('principal_user', this.userSql, uuid);
    if (!rows.length) return null;
    const user = this.user.read(rows[0]);
    user.contact = this.contact.read(rows[0]);
    user.company = this.company.read(rows[0]);
    return user;
  }

  async findAdmin(uuid: string): Promise<Admin | null> {
    const rows = await this.query('principal_admin', this.adminSql, uuid);
    if (!rows.length) return null;
    const admin = this.admin.read(rows[0]);
    admin.role = this.role.read(rows[0]);
    return admin;
  }

  /**
   * Straight to the driver with a statement prepared once (better-sqlite3's prepare, pg's
   * named statements): TypeORM's query runner adds ~50 µs a call on this path.
   */
  private async query(name: string, sql: string, uuid: string): Promise<Array<Record<string, unknown>>> {
    // A closed data source answers through TypeORM, whose errors the filter knows as "database unavailable".
    if (!this.dataSource.isInitialized) return this.dataSource.query(sql, [uuid]);
    const driver = this.dataSource.driver as unknown as DriverHandles;
    if (driver.master) {
      const result = await driver.master.query({ name, text: sql, values: [uuid] });
      return result.rows;
    }
    let statement = this.statements.get(name);
    if (!statement) {
      statement = driver.databaseConnection.prepare(sql);
      this.statements.set(name, statement);
    }
    return statement.all(uuid);
  }
}

/** The two drivers' native handles: pg's pool (`master`) or better-sqlite3's database. */
interface DriverHandles {
  master?: {
    query(q: {
      name: string;
      text: string;
      values: unknown[];
    }): Promise<{ rows: Array<Record<string, unknown>> }>;
  };
  databaseConnection: { prepare(sql: string): SqliteStatement };
}

interface SqliteStatement {
  all(...params: unknown[]): Array<Record<string, unknown>>;
}
