// What a node tells the others after a commit: a purge of many entries goes as several bounded messages.
import { expect } from 'chai';
import { announcements, type EntryChange } from '../../src/entries/service.js';

describe('entries: announcements to the other nodes', () => {
  const ids = (from: number, n: number) => Array.from({ length: n }, (_, i) => from + i);

  it('splits a purge of 25 ids into messages of at most 10, which together carry every id once', () => {
    const purge: EntryChange = { tenantId: 't', removedIds: ids(1, 25) };
    const messages = announcements([purge], 10);
    expect(messages.map((m) => m.map((c) => c.removedIds!.length))).to.deep.equal([[10], [10], [5]]);
    for (const m of messages) for (const c of m) expect(c.tenantId).to.equal('t');
    expect(messages.flat().flatMap((c) => c.removedIds)).to.deep.equal(ids(1, 25));
  });

  it('keeps small changes together in one message, and changes without ids whole', () => {
    const changes: EntryChange[] = [
      { tenantId: 't', namespace: 'default', key: 'a' },
      { tenantId: 't', namespace: 'default', key: 'b', removedIds: [1, 2, 3] },
      { tenantId: 'u' },
    ];
    expect(announcements(changes, 10)).to.deep.equal([changes]);
    expect(announcements([], 10)).to.deep.equal([]);
  });
});
