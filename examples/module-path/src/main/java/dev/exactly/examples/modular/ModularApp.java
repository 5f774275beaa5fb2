package dev.exactly.examples.modular;

import dev.exactly.idempotency.Fingerprinter;
import dev.exactly.idempotency.IdempotencyEngine;
import dev.exactly.idempotency.IdempotencyKey;
import dev.exactly.idempotency.IdempotencyPolicy;
import dev.exactly.idempotency.IdempotencyRequest;
import dev.exactly.idempotency.IdempotentResult;
import dev.exactly.idempotency.Outcome;
import dev.exactly.idempotency.Scope;
import dev.exactly.idempotency.StoredResponse;
import dev.exactly.idempotency.memory.InMemoryIdempotencyStore;
import dev.exactly.idempotency.postgres.PostgresIdempotencyStore;
import dev.exactly.idempotency.postgres.PostgresSchema;
import dev.exactly.idempotency.redis.RedisIdempotencyStore;
import dev.exactly.idempotency.spi.IdempotencyStore;
import dev.exactly.ledger.LedgerSchema;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * Guards one action with the engine on the store named by its first argument ({@code memory}, {@code redis
 * redis://…}, {@code postgres jdbc:postgresql://…}), sends the same request twice and prints what happened, one
 * {@code name=value} a line: {@code runs=1} and {@code second=REPLAYED} when the key held. With
 * {@code postgres}, the store's and the ledger's schemas are migrated first: their SQL ships inside the modules.
 * With {@code modules}, it prints the packages each of Exactly's modules exports to this one instead.
 */
public final class ModularApp {
    private ModularApp() {}

    public static void main(String[] args) throws Exception {
        if (args.length == 1 && args[0].equals("modules")) {
            printExports();
            return;
        }
        String store = args.length > 0 ? args[0] : "memory";
        try (IdempotencyStore idempotencyStore = open(store, args.length > 1 ? args[1] : "")) {
            IdempotencyEngine engine =
                    IdempotencyEngine.builder(idempotencyStore).build();
            Scope scope = new Scope(
                    "tenant_modular", "POST", "/v1/transfers", IdempotencyKey.parse("modular-" + UUID.randomUUID()));
            byte[] body = "{\"amount\":1999,\"currency\":\"EUR\"}".getBytes(StandardCharsets.UTF_8);
            IdempotencyRequest request = IdempotencyRequest.of(
                    scope,
                    Fingerprinter.ofDefaults().fingerprint("POST", "/v1/transfers", body, "application/json"),
                    IdempotencyPolicy.ofDefaults());
            AtomicInteger runs = new AtomicInteger();
            IdempotentResult first = engine.execute(request, lease -> Outcome.complete(transfer(runs)));
            IdempotentResult second = engine.execute(request, lease -> Outcome.complete(transfer(runs)));
            System.out.println("store=" + store);
            System.out.println("runs=" + runs.get());
            System.out.println("first=" + first.kind());
            System.out.println("second=" + second.kind());
            System.out.println("answer=" + new String(second.response().body(), StandardCharsets.UTF_8));
        }
    }

    private static IdempotencyStore open(String store, String address) {
        return switch (store) {
            case "memory" -> InMemoryIdempotencyStore.create();
            case "redis" -> RedisIdempotencyStore.create(address);
            case "postgres" -> {
                PGSimpleDataSource dataSource = new PGSimpleDataSource();
                dataSource.setUrl(address);
                PostgresSchema.migrate(dataSource);
                System.out.println("ledger-schema=" + (LedgerSchema.migrate(dataSource) ? "created" : "present"));
                yield PostgresIdempotencyStore.create(dataSource);
            }
            default -> throw new IllegalArgumentException("memory, redis or postgres: " + store);
        };
    }

    private static StoredResponse transfer(AtomicInteger runs) {
        String json = "{\"transfer\":\"tr_" + runs.incrementAndGet() + "\"}";
        return new StoredResponse(
                201, Map.of("Content-Type", List.of("application/json")), json.getBytes(StandardCharsets.UTF_8));
    }

    /** {@code exports.<module>=<package>,…}: what each module of Exactly in this layer exports to this module. */
    private static void printExports() {
        Module self = ModularApp.class.getModule();
        for (Module module : ModuleLayer.boot().modules()) {
            if (!module.getName().startsWith("dev.exactly.") || module == self) {
                continue;
            }
            TreeSet<String> exported = new TreeSet<>();
            for (String pkg : module.getPackages()) {
                if (module.isExported(pkg, self)) {
                    exported.add(pkg);
                }
            }
            System.out.println("exports." + module.getName() + "=" + String.join(",", exported));
        }
    }
}
