"""The graph API's first program, as written for it: build (15*5)/(15+5) as a graph on
the default graph, then run it in a Session. It prints 3.75.

    python examples/v1_graph_basics.py
"""
import jitflow.v1 as tf


def main():
    # create default graph
    tf.Graph().as_default()

    # construct computational graph by creating some nodes
    a = tf.Constant(15)
    b = tf.Constant(5)
    prod = tf.multiply(a, b)
    sum = tf.add(a, b)
    res = tf.divide(prod, sum)

    # create a session object
    session = tf.Session()

    # run computational graph to compute the output for 'res'
    out = session.run(res)
    print(out)
    return out


if __name__ == "__main__":
    main()
