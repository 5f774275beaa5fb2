package dev.exactly.testing;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import javax.sql.DataSource;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * A data source that hands out one connection, taken while the server answered, and never closes it: what a
 * pool hands out when it skips the check of a connection it used a moment ago. A test freezes the server
 * under it to see what a statement on an established connection does when no answer comes.
 */
public final class HeldConnection {
    private HeldConnection() {}

    /** A data source whose every {@code getConnection()} is {@code connection}, with {@code close()} doing nothing. */
    public static DataSource of(Connection connection) {
        Connection kept = (Connection) Proxy.newProxyInstance(HeldConnection.class.getClassLoader(),
                new Class<?>[] {Connection.class}, (proxy, method, args) -> {
                    if (method.getName().equals("close")) {
                        return null;
                    }
                    try {
                        return method.invoke(connection, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
        return new PGSimpleDataSource() {
            @Override
            public Connection getConnection() {
                return kept;
            }
        };
    }
}
