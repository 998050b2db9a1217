package dev.once.store.dynamodb;

import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.DeleteItemRequest;
import software.amazon.awssdk.services.dynamodb.model.DeleteItemResponse;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbResponse;
import software.amazon.awssdk.services.dynamodb.model.GetItemRequest;
import software.amazon.awssdk.services.dynamodb.model.GetItemResponse;
import software.amazon.awssdk.services.dynamodb.model.PutItemRequest;
import software.amazon.awssdk.services.dynamodb.model.PutItemResponse;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemResponse;

/**
 * One DynamoDB request of an operation, built once and sendable through either client: a read, or a
 * conditional write. Its reply is what {@link Step.Then} receives.
 *
 * @param <R> the SDK's response type
 */
final class Request<R extends DynamoDbResponse> {

  private final String what;
  private final Function<DynamoDbClient, R> blocking;
  private final Function<DynamoDbAsyncClient, CompletableFuture<R>> async;
  private final @Nullable Function<R, Map<String, AttributeValue>> item;
  private final @Nullable GetItemRequest reread;

  private Request(
      String what,
      Function<DynamoDbClient, R> blocking,
      Function<DynamoDbAsyncClient, CompletableFuture<R>> async,
      @Nullable Function<R, Map<String, AttributeValue>> item,
      @Nullable GetItemRequest reread) {
    this.what = what;
    this.blocking = blocking;
    this.async = async;
    this.item = item;
    this.reread = reread;
  }

  /** A read; its reply is the item (empty if there is none). */
  static Request<GetItemResponse> read(String what, GetItemRequest get) {
    return new Request<>(
        what, c -> c.getItem(get), c -> c.getItem(get), GetItemResponse::item, null);
  }

  /** A conditional put; {@code reread} reads the item when a failed condition comes without it. */
  static Request<PutItemResponse> put(
      String what, PutItemRequest put, @Nullable GetItemRequest reread) {
    return new Request<>(what, c -> c.putItem(put), c -> c.putItem(put), null, reread);
  }

  /**
   * A conditional update; {@code reread} reads the item when a failed condition comes without it
   * although it asked for it ({@code null}: the caller needs no item).
   */
  static Request<UpdateItemResponse> update(
      String what, UpdateItemRequest update, @Nullable GetItemRequest reread) {
    return new Request<>(what, c -> c.updateItem(update), c -> c.updateItem(update), null, reread);
  }

  /** A conditional delete; a failed condition's reply is an empty item. */
  static Request<DeleteItemResponse> delete(String what, DeleteItemRequest delete) {
    return new Request<>(what, c -> c.deleteItem(delete), c -> c.deleteItem(delete), null, null);
  }

  /** What the request is for, in error messages: the operation and the record. */
  String what() {
    return what;
  }

  R sendThrough(DynamoDbClient client) {
    return blocking.apply(client);
  }

  CompletableFuture<R> sendThrough(DynamoDbAsyncClient client) {
    return async.apply(client);
  }

  /** The reply a response makes: a read's item; {@code null} for a write, which was applied. */
  @Nullable Map<String, AttributeValue> reply(R response) {
    return item == null ? null : item.apply(response);
  }

  /** The read to make when a failed condition comes without the item, if the caller needs it. */
  @Nullable GetItemRequest reread() {
    return reread;
  }
}
