package dev.exactly.idempotency.webflux;

import dev.exactly.idempotency.servlet.HttpContract;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.MethodSource;

/** The servlet filter's HTTP contract on the WebFlux filter: Reactor Netty, each store (memory, Redis, PostgreSQL). */
@ParameterizedClass(name = "{0}")
@MethodSource("dev.exactly.idempotency.servlet.StoreFixture#all")
class WebFluxHttpContractTest extends HttpContract {

    @Override
    protected Adapter adapter() {
        return WebFluxServer::start;
    }
}
