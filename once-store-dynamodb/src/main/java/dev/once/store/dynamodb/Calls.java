package dev.once.store.dynamodb;

import dev.once.store.StoreUnavailableException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.awscore.AwsRequestOverrideConfiguration;
import software.amazon.awssdk.awscore.exception.AwsServiceException;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbResponse;
import software.amazon.awssdk.services.dynamodb.model.GetItemRequest;

/**
 * Runs the store's DynamoDB calls: each bounded by the call timeout (set on the request, retries
 * included), and each failure translated. A failed condition is an answer, not a failure;
 * throttling, server errors, timeouts and network failures mean the store is unavailable; any other
 * rejection (a missing table, a malformed request) is a configuration or programming error and says
 * so.
 *
 * <p>An operation is a chain of {@link Step}s. {@link #run} drives it on the caller's thread
 * through the sync client; {@link #runAsync} through the async client, each reply handled on the
 * thread the SDK completes it on (never a wait, never a {@code join}). Both hand every reply, and
 * every failure, to the same code ({@link Step.Then} and {@link #afterFailure}), so the two APIs
 * differ only in how a request travels.
 *
 * <p>Blocking calls run with the thread's interrupt flag cleared, and set again afterwards. The
 * sync client checks the flag between its stages and aborts the call when it finds it set: before
 * the request is sent, so a completion or a claim from an interrupted thread failed although
 * nothing was wrong with the store; and after the response arrived, so a write that landed was
 * reported as failed. The caller's interrupt is kept for the caller to act on once the store has
 * answered. An interrupt that arrives while the request is on the wire still aborts it inside the
 * SDK: the store then reports {@link StoreUnavailableException}, an unknown outcome, as for a
 * timeout. The async client clears the flag of the thread that sends a request (found by the
 * contract kit's interrupted callers run through the asynchronous calls), so requests go to it with
 * the flag cleared too, and it is set again once the request is on its way.
 */
final class Calls {

  private static final Logger log = LoggerFactory.getLogger(Calls.class);

  private final DynamoDbClient client;
  private final @Nullable DynamoDbAsyncClient asyncClient;
  private final String table;
  private final Duration timeout;
  private final AwsRequestOverrideConfiguration override;

  Calls(
      DynamoDbClient client,
      @Nullable DynamoDbAsyncClient asyncClient,
      String table,
      Duration timeout) {
    this.client = client;
    this.asyncClient = asyncClient;
    this.table = table;
    this.timeout = timeout;
    this.override = AwsRequestOverrideConfiguration.builder().apiCallTimeout(timeout).build();
  }

  AwsRequestOverrideConfiguration timeout() {
    return override;
  }

  /** Runs a single call through the sync client (a scan), translating its failure. */
  <T> T call(String operation, Supplier<T> call) {
    try {
      return uninterrupted(call);
    } catch (SdkException e) {
      throw translate(operation, e);
    }
  }

  /** Runs an operation to its answer on this thread, through the sync client. */
  <T> T run(Step<T> step) {
    return step.fold(answer -> answer, (request, then) -> run(next(request, then)));
  }

  private <R extends DynamoDbResponse, T> Step<T> next(Request<R> request, Step.Then<T> then) {
    R response;
    try {
      response = uninterrupted(() -> request.sendThrough(client));
    } catch (SdkException e) {
      return afterFailure(request, e, then);
    }
    return then.after(request.reply(response));
  }

  /**
   * The operation's stage: through the async client if the store has one, with no thread waiting;
   * else {@code otherwise} (the blocking call on the caller's executor). Whatever {@code first} or
   * a later step throws completes the stage, unwrapped.
   */
  <T> CompletionStage<T> stage(Supplier<Step<T>> first, Supplier<CompletionStage<T>> otherwise) {
    return asyncClient == null ? otherwise.get() : runAsync(asyncClient, first);
  }

  private <T> CompletionStage<T> runAsync(DynamoDbAsyncClient async, Supplier<Step<T>> first) {
    CompletableFuture<T> answer = new CompletableFuture<>();
    try {
      advance(async, first.get(), answer);
    } catch (RuntimeException | Error e) {
      answer.completeExceptionally(e);
    }
    return answer;
  }

  private <T> void advance(DynamoDbAsyncClient async, Step<T> step, CompletableFuture<T> answer) {
    step.fold(answer::complete, (request, then) -> send(async, request, then, answer));
  }

  private <R extends DynamoDbResponse, T> boolean send(
      DynamoDbAsyncClient async,
      Request<R> request,
      Step.Then<T> then,
      CompletableFuture<T> answer) {
    CompletableFuture<R> sent;
    try {
      sent = uninterrupted(() -> request.sendThrough(async));
    } catch (SdkException e) {
      sent = CompletableFuture.failedFuture(e);
    }
    // On the SDK's completion thread: decide the next step and send it, never wait for it. Every
    // failure, ours included, completes the answer, so the stage whenComplete returns holds none.
    var unused =
        sent.whenComplete(
            (response, failure) -> {
              try {
                advance(
                    async,
                    failure == null
                        ? then.after(request.reply(response))
                        : afterFailure(request, unwrap(failure), then),
                    answer);
              } catch (RuntimeException | Error e) {
                answer.completeExceptionally(e);
              }
            });
    return true;
  }

  /**
   * The step a failed request leads to. A failed condition is a reply: the item DynamoDB returned
   * with it, or, where it returned none (older DynamoDB Local versions), the item read afresh if
   * the request names a read, else an empty item. Any other failure is thrown, translated.
   */
  private <T> Step<T> afterFailure(Request<?> request, Throwable failure, Step.Then<T> then) {
    if (failure instanceof ConditionalCheckFailedException failed) {
      if (failed.hasItem() && !failed.item().isEmpty()) {
        return then.after(failed.item());
      }
      GetItemRequest reread = request.reread();
      if (reread == null) {
        return then.after(Map.<String, AttributeValue>of());
      }
      log.debug(
          "{} on table {}: the failed condition came without the item; reading it",
          request.what(),
          table);
      return Step.send(Request.read(request.what(), reread), then);
    }
    throw translate(request.what(), failure);
  }

  private static Throwable unwrap(Throwable failure) {
    return failure instanceof CompletionException && failure.getCause() != null
        ? failure.getCause()
        : failure;
  }

  private static <T> T uninterrupted(Supplier<T> call) {
    boolean interrupted = Thread.interrupted();
    try {
      return call.get();
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private RuntimeException translate(String operation, Throwable failure) {
    if (failure instanceof Error e) {
      throw e;
    }
    if (failure instanceof RuntimeException e && !(e instanceof SdkException)) {
      return e; // not the store's: a bug, or a client that was closed
    }
    if (failure instanceof AwsServiceException service
        && !service.retryable()
        && !service.isThrottlingException()
        && service.statusCode() >= 400
        && service.statusCode() < 500) {
      return new IllegalStateException(
          "DynamoDB rejected " + operation + " on table " + table + ": " + failure.getMessage(),
          failure);
    }
    return new StoreUnavailableException(
        "DynamoDB could not run "
            + operation
            + " on table "
            + table
            + " (call timeout "
            + timeout.toMillis()
            + " ms): "
            + failure.getMessage(),
        failure);
  }
}
