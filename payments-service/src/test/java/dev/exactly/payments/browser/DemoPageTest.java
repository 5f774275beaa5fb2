package dev.exactly.payments.browser;

import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** Page tests in demo mode; the properties are declared once, here, so these classes share one service. */
abstract class DemoPageTest extends PageTest {
    @DynamicPropertySource
    static void demoProperties(DynamicPropertyRegistry registry) {
        pageProperties(registry, true);
    }
}
