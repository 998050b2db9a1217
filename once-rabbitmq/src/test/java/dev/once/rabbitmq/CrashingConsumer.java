package dev.once.rabbitmq;

import com.rabbitmq.client.Connection;
import com.rabbitmq.client.Delivery;
import dev.once.Once;
import dev.once.Scope;
import dev.once.messaging.MessageIdempotency;
import dev.once.messaging.MessageProcessor;
import dev.once.messaging.TransactionalMessageIdempotency;
import dev.once.store.jdbc.PostgresStore;
import javax.sql.DataSource;

/**
 * The child JVM of {@link CrashTest}: consumes one message, prints the mode's name at the moment of
 * death it stands for, and hangs there until SIGKILLed. Arguments: the mode, the queue, the records
 * table and the effects table.
 */
public final class CrashingConsumer {

  /** Where the process is killed. */
  enum Mode {
    /** Plain store: the effect and its record are written; the acknowledgement is not sent. */
    AFTER_RECORD,
    /** Transactional: the effect row is written in the transaction, which never commits. */
    BEFORE_COMMIT
  }

  private CrashingConsumer() {}

  public static void main(String[] args) throws Exception {
    Mode mode = Mode.valueOf(args[0]);
    DataSource db = CrashTest.database();
    String effects = args[3];
    PostgresStore store = PostgresStore.builder(db).tableName(args[2]).build();
    MessageProcessor<Delivery> processor;
    if (mode == Mode.AFTER_RECORD) {
      MessageIdempotency<Delivery> messages =
          MessageIdempotency.builder(Once.of(store), AmqpMessages.READER)
              .scope(Scope.of("crash-test"))
              .build();
      processor =
          delivery -> {
            messages.process(
                delivery,
                (d, ctx) -> {
                  try (java.sql.Connection c = db.getConnection()) {
                    CrashTest.insertEffect(effects, c, d);
                  }
                });
            return hang(mode);
          };
    } else {
      TransactionalMessageIdempotency<Delivery> messages =
          TransactionalMessageIdempotency.builder(
                  db, store.transactional()::on, AmqpMessages.READER)
              .scope(Scope.of("crash-test"))
              .build();
      processor =
          delivery ->
              messages.process(
                  delivery,
                  (d, c, ctx) -> {
                    CrashTest.insertEffect(effects, c, d);
                    hang(mode);
                  });
    }
    Connection connection = Rabbit.connect();
    RabbitConsumer.builder(connection, args[1], processor).start();
    Thread.sleep(120_000); // bounded: the parent kills this process long before
  }

  private static <T> T hang(Mode mode) {
    System.out.println(mode.name());
    System.out.flush();
    try {
      Thread.sleep(120_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    throw new IllegalStateException("the parent should have killed this process");
  }
}
