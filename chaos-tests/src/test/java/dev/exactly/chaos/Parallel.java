package dev.exactly.chaos;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;

/** Runs tasks on virtual threads, at most {@code parallelism} at a time, and waits for all of them. */
final class Parallel {
    private Parallel() {}

    /** Runs every task; the first failure is rethrown after all have ended. */
    static void runAll(List<? extends Runnable> tasks, int parallelism) {
        Semaphore permits = new Semaphore(parallelism);
        RuntimeException failure = null;
        try (ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<?>> futures = new ArrayList<>();
            for (Runnable task : tasks) {
                futures.add(executor.submit(() -> {
                    permits.acquireUninterruptibly();
                    try {
                        task.run();
                    } finally {
                        permits.release();
                    }
                }));
            }
            for (Future<?> f : futures) {
                try {
                    f.get();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted", e);
                } catch (ExecutionException e) {
                    if (failure == null) {
                        failure = e.getCause() instanceof RuntimeException r
                                ? r
                                : new IllegalStateException(e.getCause());
                    }
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }
}
