import { Column, DataSource, Entity, PrimaryColumn } from 'typeorm';
import { SqliteTransactionGate } from './sqlite-transaction-gate';

@Entity('probe')
class Probe {
  @PrimaryColumn()
  id!: number;

  @Column({ type: 'text' })
  label!: string;
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

/** The gate on a real better-sqlite3 data source (in memory), as SqliteRuntime installs it. */
describe('SqliteTransactionGate', () => {
  let dataSource: DataSource;
  let gate: SqliteTransactionGate;

  beforeEach(async () => {
    dataSource = await new DataSource({
      type: 'better-sqlite3',
      database: ':memory:',
      entities: [Probe],
    }).initialize();
    await dataSource.query('CREATE TABLE probe (id integer PRIMARY KEY NOT NULL, label text NOT NULL)');
    gate = new SqliteTransactionGate();
    gate.install(dataSource);
  });
  afterEach(async () => {
    await dataSource.destroy();
  });

  const labels = async () =>
    (await dataSource.query<Array<{ label: string }>>('SELECT label FROM probe ORDER BY id')).map(
      (r) => r.label,
    );
  const insert = (id: number, label: string) =>
    dataSource.query('INSERT INTO probe (id, label) VALUES (?, ?)', [id, label]);

  /** A transaction that inserts `label` and stays open until `release()`; `rollback` makes it throw then. */
  function heldTransaction(id: number, label: string, rollback = false) {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let opened!: () => void;
    const open = new Promise<void>((resolve) => (opened = resolve));
    const done = gate.transaction(() =>
      dataSource.transaction(async (em) => {
        await em.query('INSERT INTO probe (id, label) VALUES (?, ?)', [id, label]);
        opened();
        await held;
        if (rollback) throw new Error('rolled back');
      }),
    );
    return { done, release, open };
  }

  it('holds an outside statement until the open transaction ends: it neither reads nor joins it', async () => {
    const { done, release, open } = heldTransaction(1, 'inside');
    await open;
    let seen: string[] | undefined;
    const outsideRead = labels().then((l) => (seen = l));
    await turn();
    await turn();
    expect(seen).toBeUndefined();
    expect(gate.waiting).toBe(1);
    release();
    await Promise.all([done, outsideRead]);
    expect(seen).toEqual(['inside']);
  });

  it('keeps an outside write out of a transaction that rolls back: the write stays', async () => {
    const { done, release, open } = heldTransaction(1, 'rolled back', true);
    await open;
    const outsideWrite = insert(2, 'outside');
    await turn();
    release();
    await expect(done).rejects.toThrow('rolled back');
    await outsideWrite;
    expect(await labels()).toEqual(['outside']);
  });

  it('runs transactions and outside statements in the order they came', async () => {
    const order: string[] = [];
    const first = heldTransaction(1, 'first');
    await first.open;
    const outside1 = insert(2, 'outside 1').then(() => order.push('outside 1'));
    const second = gate.transaction(() =>
      dataSource.transaction(async (em) => {
        await em.query("INSERT INTO probe (id, label) VALUES (3, 'second')");
        order.push('second');
      }),
    );
    const outside2 = insert(4, 'outside 2').then(() => order.push('outside 2'));
    await turn();
    expect(order).toEqual([]);
    first.release();
    await Promise.all([first.done, outside1, second, outside2]);
    expect(order).toEqual(['outside 1', 'second', 'outside 2']);
  });

  it('lets the event loop turn between a transaction and the next one queued behind it', async () => {
    const order: string[] = [];
    const first = heldTransaction(1, 'first');
    await first.open;
    const second = gate.transaction(() =>
      dataSource.transaction(async (em) => {
        await em.query("INSERT INTO probe (id, label) VALUES (2, 'second')");
        order.push('second');
      }),
    );
    // Other work, due at the next turn of the event loop: the first transaction commits before it.
    setImmediate(() => order.push('other work'));
    first.release();
    await Promise.all([first.done, second]);
    expect(order).toEqual(['other work', 'second']);
  });

  it('lets a synchronous read in when the open transaction ends, ahead of the transactions queued behind it', async () => {
    const order: string[] = [];
    const first = heldTransaction(1, 'first');
    await first.open;
    const queued = [2, 3].map((id) =>
      gate.transaction(() =>
        dataSource.transaction(async (em) => {
          await em.query('INSERT INTO probe (id, label) VALUES (?, ?)', [id, `queued ${id}`]);
          order.push(`queued ${id}`);
        }),
      ),
    );
    expect(gate.mustWait()).toBe(true);
    const read = gate.whenNoOpenTransaction(() => {
      order.push('read');
      return gate.mustWait();
    });
    first.release();
    expect(await read).toBe(false);
    await Promise.all([first.done, ...queued]);
    expect(order).toEqual(['read', 'queued 2', 'queued 3']);
  });

  it("makes TypeORM's own transaction (a save() of several rows outside any scope) atomic, and holds transactions until it ends", async () => {
    await insert(2, 'taken');
    const rows = [1, 2, 3].map((id) => Object.assign(new Probe(), { id, label: `saved ${id}` }));
    // Row 2 exists: save() updates it; a row that breaks NOT NULL makes the whole save fail.
    const failing = [...rows, Object.assign(new Probe(), { id: 4, label: null as unknown as string })];
    const save = dataSource.getRepository(Probe).save(failing);
    const queued = gate.transaction(() =>
      dataSource.transaction((em) => em.query("UPDATE probe SET label = 'after'")),
    );
    await expect(save).rejects.toThrow();
    await queued;
    expect(await labels()).toEqual(['after']);
    await dataSource.getRepository(Probe).save(rows);
    expect(await labels()).toEqual(['saved 1', 'saved 2', 'saved 3']);
  });

  it('lets the event loop turn before a transaction begun in the same turn as the one before it ended (units of one batch)', async () => {
    const order: string[] = [];
    const unit = (n: number) => () =>
      gate.transaction(() =>
        dataSource.transaction(async (em) => {
          await em.query('INSERT INTO probe (id, label) VALUES (?, ?)', [n, `unit ${n}`]);
          order.push(`unit ${n}`);
        }),
      );
    setImmediate(() => order.push('other work'));
    // Nothing else queued: without the turn, unit 2 would begin in unit 1's chain of microtasks.
    await unit(1)().then(unit(2));
    expect(order).toEqual(['unit 1', 'other work', 'unit 2']);
    expect(await labels()).toEqual(['unit 1', 'unit 2']);
  });

  it('never pauses inside a transaction: its statements run in one go, the event loop turns after it', async () => {
    const order: string[] = [];
    setImmediate(() => order.push('other work'));
    await gate.transaction(() =>
      dataSource.transaction(async (em) => {
        // A statement longer than a slice of the event loop (the gate once paused after one), then more.
        await em.query(
          'WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500000) SELECT COUNT(*) FROM n',
        );
        for (let n = 0; n < 50; n++)
          await em.query('INSERT INTO probe (id, label) VALUES (?, ?)', [n, `row ${n}`]);
        order.push('transaction done');
      }),
    );
    expect(order).toEqual(['transaction done']);
    await turn();
    expect(order).toEqual(['transaction done', 'other work']);
    expect(await dataSource.query('SELECT COUNT(*) AS n FROM probe')).toEqual([{ n: 50 }]);
  });

  it('says when a read must wait', async () => {
    expect(gate.mustWait()).toBe(false);
    let insideMustWait: boolean | undefined;
    const { done, release, open } = heldTransaction(1, 'x');
    const inside = gate.transaction(() => Promise.resolve((insideMustWait = gate.mustWait())));
    await open;
    expect(gate.mustWait()).toBe(true);
    release();
    await Promise.all([done, inside]);
    expect(insideMustWait).toBe(false);
    expect(gate.mustWait()).toBe(false);
  });
});
