package dev.exactly.payments;

import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Test classes that run the service with its defaults (in-memory hot tier, scheduled worker) share one
 * service instance and schema: the properties are declared once, here, so the test context is cached.
 */
public abstract class DefaultServiceTest extends ServiceTest {
    @DynamicPropertySource
    static void defaultProperties(DynamicPropertyRegistry registry) {
        commonProperties(registry, "pay_default");
    }
}
