"""The throughput-versus-interactivity chart: the axes vLLM's and NVIDIA's serving plots use."""


def test_throughput_interactivity_chart_uses_the_serving_engineers_axes():
    import pandas as pd

    from accelbook.ui import charts
    front = pd.DataFrame({"system": ["a", "a", "b"], "tokens_per_s_per_user": [10.0, 50.0, 200.0],
                          "tokens_per_s_per_chip": [1000.0, 400.0, 20.0], "tp": [8, 8, 1], "batch": [64, 8, 1],
                          "flag": ["", "", "out of the model's reach: x"]})
    spec = charts.throughput_interactivity_chart(front).to_dict()
    enc = spec["encoding"]
    assert (enc["x"]["field"], enc["y"]["field"]) == ("tokens_per_s_per_user", "tokens_per_s_per_chip")
    assert enc["x"]["title"] == "interactivity: output tokens/s per user"
    assert enc["y"]["title"].startswith("output tokens/s per GPU")
    assert "scale" not in enc["x"] and "scale" not in enc["y"]          # linear, as vLLM and NVIDIA plot them
    assert "batch" in [t if isinstance(t, str) else t.get("field") for t in enc["tooltip"]]
    assert [r["system"] for r in spec["datasets"]["points"]] == ["a", "a"]   # the flagged point left out
