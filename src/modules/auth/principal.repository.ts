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
    const row = await this.queryRow('principal_user', this.userSql, uuid);
    if (!row) return null;
    const user = this.user.read(row);
    user.contact = this.contact.read(row, this.user.width);
    user.company = this.company.read(row, this.user.width + this.contact.width);
    return user;
  }

  async findAdmin(uuid: string): Promise<Admin | null> {
    const row = await this.queryRow('principal_admin', this.adminSql, uuid);
    if (!row) return null;
    const admin = this.admin.read(row);
    admin.role = this.role.read(row, this.admin.width);
    return admin;
  }

  /**
   * Straight to the driver with a statement prepared once (better-sqlite3's prepare, pg's
   * named statements): TypeORM's query runner adds ~50 µs a call on this path.
   */
  private async queryRow(name: string, sql: string, uuid: string): Promise<unknown[] | undefined> {
    if (!this.dataSource.isInitialized) {
      // A closed data source answers through TypeORM, whose errors the filter knows as "database unavailable".
      await this.dataSource.query(sql, [uuid]);
      return undefined;
    }
    const driver = this.dataSource.driver as unknown as DriverHandles;
    if (driver.master) {
      const result = await driver.master.query({ name, text: sql, values: [uuid], rowMode: 'array' });
      return result.rows[0];
    }
    let statement = this.statements.get(name);
    if (!statement) {
      statement = driver.databaseConnection.prepare(sql).raw(true);
      this.statements.set(name, statement);
    }
    return statement.get(uuid);
  }
}

/** The two drivers' native handles: pg's pool (`master`) or better-sqlite3's database. */
interface DriverHandles {
  master?: {
    query(q: {
      name: string;
      text: string;
      values: unknown[];
      rowMode: 'array';
    }): Promise<{ rows: unknown[][] }>;
  };
  databaseConnection: { prepare(sql: string): SqliteStatement };
}

interface SqliteStatement {
  raw(toggle: boolean): SqliteStatement;
  get(...params: unknown[]): unknown[] | undefined;
}
