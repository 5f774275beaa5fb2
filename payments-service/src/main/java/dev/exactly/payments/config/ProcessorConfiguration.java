package dev.exactly.payments.config;

import dev.exactly.psp.PspClient;
import dev.exactly.psp.PspConfig;
import dev.exactly.psp.PspSimulator;
import java.net.URI;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The payment processor: the one at {@code exactly.payments.psp-url} ({@code PSP_URL}), or an in-process
 * {@link PspSimulator} on a free loopback port. Either way the service talks to it over HTTP through
 * {@link PspClient}, so timeouts and lost responses are real.
 */
@Configuration(proxyBeanMethods = false)
public class ProcessorConfiguration {
    private static final Logger log = LoggerFactory.getLogger(ProcessorConfiguration.class);

    /** The in-process processor stand-in, when no processor is configured. */
    @Bean(destroyMethod = "close")
    InProcessProcessor inProcessProcessor(PaymentsProperties properties) {
        if (!properties.pspUrl().isBlank()) {
            return new InProcessProcessor(null);
        }
        PspSimulator simulator = PspSimulator.start(PspConfig.ofDefaults());
        log.info("no PSP_URL: processor stand-in listening on {}", simulator.baseUri());
        return new InProcessProcessor(simulator);
    }

    @Bean(destroyMethod = "close")
    PspClient pspClient(PaymentsProperties properties, InProcessProcessor inProcess) {
        URI base = inProcess
                .simulator()
                .map(PspSimulator::baseUri)
                .orElseGet(() -> URI.create(properties.pspUrl().strip()));
        return PspClient.builder(base)
                .connectTimeout(properties.processor().connectTimeout())
                .requestTimeout(properties.processor().requestTimeout())
                .build();
    }

    /** Holds the in-process simulator, if one was started. */
    public static final class InProcessProcessor implements AutoCloseable {
        private final @Nullable PspSimulator simulator;

        InProcessProcessor(@Nullable PspSimulator simulator) {
            this.simulator = simulator;
        }

        /** The simulator, when the processor runs in this process. */
        public Optional<PspSimulator> simulator() {
            return Optional.ofNullable(simulator);
        }

        @Override
        public void close() {
            if (simulator != null) {
                simulator.close();
            }
        }
    }
}
