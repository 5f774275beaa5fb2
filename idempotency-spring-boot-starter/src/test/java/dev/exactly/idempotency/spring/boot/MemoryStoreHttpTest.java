package dev.exactly.idempotency.spring.boot;

/** The HTTP contract on the default in-memory store. */
class MemoryStoreHttpTest extends HttpContractTest {

    @Override
    String storeName() {
        return "InMemoryIdempotencyStore";
    }
}
