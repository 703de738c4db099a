"""Python client for privagg, differentially private federated averaging on Kafka and Flink.

A client follows a training job's rounds, sends its model update (a delta from the announced
base model) for each round, and reads the released private model with its privacy statement::

    from privagg_client import PrivaggClient

    with PrivaggClient.from_spec("jobs/digits-softmax.yaml", "localhost:9092", "alice") as client:
        announcement = client.wait_for_round()
        base = client.wait_for_model(announcement.base_model_round)
        client.send_update(announcement.round, {"weights": dw, "bias": db})  # raises if late
        model = client.wait_for_model(announcement.round)
        print(model.privacy.epsilon)

or lets :meth:`PrivaggClient.run` do that loop, calling a training function each round::

    def train(base: GlobalModel, round_number: int) -> dict[str, np.ndarray]:
        return {"weights": dw, "bias": db}  # the delta from base.tensors

    result = client.run(train, rounds=10)
    print(result.rounds, result.model.privacy.epsilon)

For a job whose spec says ``aggregation: {mode: secure}`` the same calls take part in secure
aggregation (:mod:`privagg_client.secure`): the job learns only the round's sum.
"""

from .client import PrivaggClient, RunResult, TrainFn, UpdateReceipt
from .errors import (
    BudgetSpentError,
    JobConfigError,
    KafkaClientError,
    LateUpdateError,
    ModelFileError,
    ModelUnavailableError,
    NonFiniteValuesError,
    PrivaggError,
    PrivaggTimeout,
    RecordTooLargeError,
    SecureProtocolError,
    SecureRoundError,
    SendError,
    SessionStateError,
    TensorShapeError,
    UnmaskRefused,
    WireFormatError,
)
from .job import Aggregation, JobConfig, TensorSpec, Topics
from .model_files import (
    load_model,
    load_npz,
    load_safetensors,
    save_model,
    save_npz,
    save_safetensors,
)
from .records import (
    CorrelatedNoise,
    GlobalModel,
    PrivacyStatement,
    RoundAnnouncement,
    SecureAggregation,
)
from .secure_round import SecureRoundResult
from .statistics import StatisticsQuery, encode_rows
from .torch_support import from_state_dict, state_dict_delta, to_state_dict
from .updates import encode_update

__version__ = "0.2.0"

__all__ = [
    "CorrelatedNoise",
    "PrivaggClient",
    "StatisticsQuery",
    "encode_rows",
    "RunResult",
    "UpdateReceipt",
    "SecureRoundResult",
    "TrainFn",
    "JobConfig",
    "Aggregation",
    "TensorSpec",
    "Topics",
    "RoundAnnouncement",
    "GlobalModel",
    "PrivacyStatement",
    "SecureAggregation",
    "encode_update",
    "save_model",
    "load_model",
    "save_safetensors",
    "load_safetensors",
    "save_npz",
    "load_npz",
    "to_state_dict",
    "from_state_dict",
    "state_dict_delta",
    "PrivaggError",
    "JobConfigError",
    "TensorShapeError",
    "NonFiniteValuesError",
    "RecordTooLargeError",
    "WireFormatError",
    "ModelFileError",
    "KafkaClientError",
    "SendError",
    "BudgetSpentError",
    "LateUpdateError",
    "PrivaggTimeout",
    "ModelUnavailableError",
    "SecureProtocolError",
    "UnmaskRefused",
    "SessionStateError",
    "SecureRoundError",
]
