package dev.exactly.idempotency.client.intent;

class InMemoryKeyJournalTest extends KeyJournalContract {
    @Override
    KeyJournal journal() {
        return new InMemoryKeyJournal();
    }
}
