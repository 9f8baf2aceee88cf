import { randomUUID } from 'node:crypto';
import { BeforeInsert, Column, CreateDateColumn, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';
import { DATETIME } from './column-types';

/** Internal auto-increment id (never in the API), public uuid, timestamps. */
export abstract class BaseEntity {
  @PrimaryGeneratedColumn()
  id: number;

  @Column({ type: 'varchar', length: 36, unique: true })
  uuid: string;

  @CreateDateColumn({ type: DATETIME })
  createdAt: Date;

  @UpdateDateColumn({ type: DATETIME })
  updatedAt: Date;

  @BeforeInsert()
  assignUuid(): void {
    this.uuid ??= randomUUID();
  }
}
