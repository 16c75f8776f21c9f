"""One training run under a tf.distribute strategy, with add_custom or with tf.math.add.

Run as a script (a fresh process: logical devices and TF_CONFIG must be set before
TensorFlow starts):

    python training.py mirrored OUT.npz   # MirroredStrategy over two logical CPU devices
    python training.py worker OUT.npz     # one worker of MultiWorkerMirroredStrategy (TF_CONFIG set)
    python training.py single OUT.npz     # the oracle: one device, the whole global batch

Each run trains the same model twice from the same initial weights, once with
``tf_ge_custom.add_custom`` and once with ``tf.math.add`` in the two adds of the step
(a broadcast bias add and an elementwise add), for STEPS steps whose gradients each replica
computes on its share of the global batch and the optimizer aggregates across replicas
(an all-reduce). Writes the final weights, the losses and how many AddCustom ops the step's
graph holds, per add, to OUT.npz.
"""
import sys

import numpy as np

FEATURES, UNITS, GLOBAL_BATCH, STEPS = 16, 8, 32, 3


def data():
    rng = np.random.RandomState(0)
    x = rng.standard_normal((GLOBAL_BATCH * STEPS, FEATURES)).astype(np.float32)
    y = rng.standard_normal((GLOBAL_BATCH * STEPS, UNITS)).astype(np.float32)
    return x, y


def initial_weights():
    rng = np.random.RandomState(1)
    return (rng.standard_normal((FEATURES, UNITS)).astype(np.float32) * 0.3,
            rng.standard_normal(UNITS).astype(np.float32) * 0.3)


def train(tf, strategy, add):
    x_all, y_all = data()
    w0, b0 = initial_weights()
    with strategy.scope():
        w = tf.Variable(w0, name="w")
        b = tf.Variable(b0, name="b")
        optimizer = tf.keras.optimizers.SGD(0.1)

    def dataset(context):
        # Each input pipeline (one per worker) takes every n-th example; each replica gets
        # per-replica batches, so that every step covers one contiguous global batch.
        per_replica = context.get_per_replica_batch_size(GLOBAL_BATCH)
        ds = tf.data.Dataset.from_tensor_slices((x_all, y_all))
        return ds.shard(context.num_input_pipelines, context.input_pipeline_id).batch(per_replica)

    iterator = iter(strategy.distribute_datasets_from_function(dataset))

    def replica_step(x, y):
        with tf.GradientTape() as tape:
            h = add(tf.matmul(x, w), b)  # [batch, UNITS] + [UNITS]: broadcasts
            z = add(h, tf.tanh(h))
            per_example = tf.reduce_sum(tf.square(z - y), axis=1)
            loss = tf.nn.compute_average_loss(per_example, global_batch_size=GLOBAL_BATCH)
        gradients = tape.gradient(loss, [w, b])
        optimizer.apply_gradients(zip(gradients, [w, b]))  # all-reduced across replicas
        return loss

    @tf.function
    def step(iterator):
        x, y = next(iterator)
        return strategy.reduce(tf.distribute.ReduceOp.SUM, strategy.run(replica_step, args=(x, y)), axis=None)

    losses = [float(step(iterator)) for _ in range(STEPS)]
    graph = step.get_concrete_function(iterator).graph
    ops = sum(1 for op in graph.get_operations() if op.type == "AddCustom")
    for function in graph._functions.values():  # replica functions traced apart
        ops += sum(1 for node in function.definition.node_def if node.op == "AddCustom")
    return w.numpy(), b.numpy(), np.array(losses), ops


def main(argv):
    mode, out = argv
    import tensorflow as tf

    if mode == "mirrored":
        cpu = tf.config.list_physical_devices("CPU")[0]
        tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
        strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    elif mode == "worker":
        strategy = tf.distribute.MultiWorkerMirroredStrategy()
    elif mode == "single":
        strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
    else:
        raise SystemExit("mode: mirrored, worker or single")
    import tf_ge_custom

    results = {"replicas": np.array(strategy.num_replicas_in_sync)}
    for name, add in (("add_custom", tf_ge_custom.add_custom), ("tf_math_add", tf.math.add)):
        w, b, losses, ops = train(tf, strategy, add)
        results.update({name + "_w": w, name + "_b": b, name + "_losses": losses, name + "_ops": np.array(ops)})
    np.savez(out, **results)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
